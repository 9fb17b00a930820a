#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx gateway ...` works without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
