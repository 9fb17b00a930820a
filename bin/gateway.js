#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx gateway ...` works without a build step.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli.ts');
runCli(process.argv.slice(2));
