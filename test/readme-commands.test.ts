import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, freshDatabase, usingPostgres, usingRedis, type TestDatabase } from './harness.ts';
import { startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.ts';
import { freePort } from './support/gateway-process.ts';
import { readmeShellBlocks, type ReadmeBlock, type ReadmeCommand } from './support/readme-blocks.ts';
import { coverageOf, RULES, rulesFor, scriptCommands } from './support/readme-coverage.ts';
import { isCommand, readmeInlineCommands } from './support/readme-inline.ts';
import { checkProcess } from './support/readme-processes.ts';
import { ReadmeSession, type Surroundings } from './support/readme-session.ts';
import { startS3Server, type S3Server } from './support/s3-server.ts';
import { runBash, waitForOk, type Background, type Env } from './support/shell-session.ts';

// Issue 26: the README, read top to bottom on a fresh clone, works as written. Every command of its
// shell blocks, and every command in its prose (a code span such as `npm run dev`; the rule is in
// test/support/readme-inline.ts), is covered exactly once (test/support/readme-coverage.ts). The live
// ones run here against a gateway that the README's own `npm start` line started: the blocks' in
// README order, and the prose's (servers and workers among them) side by side with those.

const ROOT = path.resolve(import.meta.dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const blocks = readmeShellBlocks(README);
const inline = readmeInlineCommands(README);
const packageScripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('the README commands', () => {
  const commands = [...blocks.flatMap((block) => block.commands), ...inline];
  const where = (command: ReadmeCommand) => `line ${command.line}: ${command.text}`;

  it('are each covered by exactly one rule, and every rule covers one', () => {
    expect(blocks.filter((block) => block.commands.length === 0).map((block) => block.line)).toEqual([]);
    expect(commands.filter((c) => rulesFor(c).length === 0).map(where)).toEqual([]);
    expect(commands.filter((c) => rulesFor(c).length > 1).map(where)).toEqual([]);
    expect(RULES.filter((r) => !commands.some((c) => r.command.test(c.text))).map((r) => String(r.command))).toEqual([]);
  });

  it('in the prose are the code spans that start with a command word and say more than its name', () => {
    expect(['npm run dev', 'CLUSTER=auto npm start', 'apt-get install chromium', 'npx gateway ...'].filter((span) => !isCommand(span))).toEqual([]);
    expect(['npm', 'node', 'nginx', 'WORKERS=0', 'HOST=0.0.0.0', 'FILES_STORE=s3://...', 'gateway_webhook_deliveries_total{outcome}'].filter(isCommand)).toEqual([]);
    expect(inline.map((c) => c.text)).toEqual(expect.arrayContaining(['npm run dev', 'npm run gateway -- worker', 'CLUSTER=auto npm start', 'WORKERS=0 npm start']));
  });

  it('covered by a script or a test file: that file really has the step', () => {
    const missing: string[] = [];
    for (const { coverage } of RULES) {
      if (coverage.by === 'script') {
        for (const step of coverage.steps) if (!scriptCommands(step.file).some((line) => step.line.test(line))) missing.push(`${step.file}: ${step.line}`);
      } else if (coverage.by === 'test file') {
        const file = path.join(ROOT, coverage.file);
        if (!fs.existsSync(file) || !fs.readFileSync(file, 'utf8').includes(coverage.contains)) missing.push(`${coverage.file}: ${coverage.contains}`);
        const script = coverage.npmScript;
        if (script && !packageScripts[script.name]?.includes(script.includes)) missing.push(`package.json scripts.${script.name}: ${script.includes}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('need the outside world only rarely, and each such one says why', () => {
    const outside = RULES.flatMap(({ coverage }) => (coverage.by === 'outside world' ? [coverage.reason] : []));
    expect(outside.length).toBeLessThanOrEqual(3);
    expect(outside.filter((reason) => reason.length < 20)).toEqual([]);
  });

  it('cite no outside document', () => {
    expect(README).not.toMatch(/\.\.\/shared|SPEC|DESIGN\.md|§/);
  });
});

const runsHere = (needs: string | undefined) => needs === undefined || (usingPostgres && usingRedis);
const needsOf = (command: ReadmeCommand) => {
  const coverage = coverageOf(command);
  return coverage?.by === 'live' ? coverage.needs : undefined;
};
const blockNeeds = (block: ReadmeBlock) => block.commands.map(needsOf).find((needs) => needs !== undefined);
const liveCommands = (block: ReadmeBlock) => block.commands.filter((command) => coverageOf(command)?.by === 'live');
// The prose's commands that run here; one that is also a block's command runs with its block.
const blockTexts = new Set(blocks.flatMap((block) => block.commands.map((c) => c.text)));
const proseRuns = inline.flatMap((command) => {
  const coverage = coverageOf(command);
  return !blockTexts.has(command.text) && (coverage?.by === 'live' || coverage?.by === 'process') ? [{ command, coverage }] : [];
});

describe(`the README's live commands, in README order [${backendName}]`, () => {
  // The first `npm start` the live commands reach starts the gateway every earlier block talks to
  // (the Quick start's own `npm install && npm start` is the fresh-clone script's), so it and the
  // exports before it in its block run first.
  const starter = blocks.find((block) => liveCommands(block).some((c) => /\bnpm start\b/.test(c.text)));
  if (!starter) throw new Error('the README has no live `npm start` line to start the gateway its commands talk to');
  const startUpTo = starter.commands.findIndex((c) => /\bnpm start\b/.test(c.text));
  const ranFirst = new Set(starter.commands.slice(0, startUpTo + 1));
  let session: ReadmeSession;
  let database: TestDatabase;
  let openai: FakeOpenAI;
  let s3: S3Server | undefined;
  let multiMachineDatabase: string | undefined;
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-readme-'));
  /** Each prose command's run: its error, or undefined once it passed. */
  const proseOutcomes = new Map<ReadmeCommand, Promise<unknown>>();

  beforeAll(async () => {
    const build = await runBash('npm run build:server --silent', process.env, ROOT);
    expect(build.code, build.stderr).toBe(0);
    database = await freshDatabase();
    openai = await startFakeOpenAI();
    const env: Env = { ...process.env };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'ADMIN_TOKEN', 'KEY', 'PUBLIC_BASE_URL', 'FILES_STORE', 'NODE_ENV', 'GATEWAY_DEMO', 'LOG_LEVEL']) delete env[name];
    Object.assign(env, database.env, { FILES_DIR: path.join(temp, 'files'), OPENAI_API_KEY: openai.key, GEMINI_API_KEY: 'readme-gemini-key', ARK_API_KEY: 'readme-ark-key' });
    // npm's pre-scripts (the builds before `npm start` and `npm run gateway`) are skipped, the server
    // bundle having been built above: start's console build would empty dist/console under the
    // browser tests running beside this file, and a build before each CLI line would only repeat
    // that one. The fresh-clone script runs `npm start` with its builds.
    env.npm_config_ignore_scripts = 'true';
    if (usingRedis) env.REDIS_URL = process.env.REDIS_URL;
    let postgres: Surroundings['postgres'];
    if (usingPostgres && usingRedis) {
      // The multi-machine block's bucket, on a local S3 server as the README's MinIO case has it
      // (FILES_STORE and AWS_REGION are the block's own exports).
      s3 = await startS3Server('gateway-results');
      const { FILES_STORE: _store, AWS_REGION: _region, ...s3Env } = s3.env();
      Object.assign(env, s3Env);
      multiMachineDatabase = `gw_readme_${randomBytes(4).toString('hex')}`;
      postgres = { url: new URL(process.env.DATABASE_URL!), database: multiMachineDatabase, redisUrl: process.env.REDIS_URL! };
    }
    env.PORT = String(await freePort());
    session = new ReadmeSession({ root: ROOT, env, port: Number(env.PORT), openai, postgres });
    let gateway: Background | undefined;
    for (const command of ranFirst) gateway = (await session.run(command, { byPrefix: new Map() })) ?? gateway;
    for (let i = 0; i < 100 && !/sk-gw-\w/.test(gateway!.output()); i++) await new Promise((r) => setTimeout(r, 50));
    session.demoKey = /sk-gw-[A-Za-z0-9_-]+/.exec(gateway!.output())?.[0] ?? '';
    expect(session.demoKey, gateway!.output()).not.toBe('');
    // The prose's commands start now, side by side with each other and with the blocks, in the
    // terminal as the gateway's start left it: the blocks spend most of their time waiting on tasks.
    for (const { command, coverage } of proseRuns) {
      if (coverage.by === 'live' && !runsHere(coverage.needs)) continue;
      const run =
        coverage.by === 'process'
          ? checkProcess(command.text, coverage.ready, { root: ROOT, env: { ...session.env }, demoKey: session.demoKey })
          : session.run(coverage.runs ? { ...command, text: coverage.runs } : command, { byPrefix: new Map() }, coverage.prints);
      proseOutcomes.set(command, run.then(() => undefined, (err: unknown) => err));
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(proseOutcomes.values());
    await Promise.all(session?.servers.map((server) => server.stop()) ?? []);
    await openai?.close();
    await s3?.stop();
    if (multiMachineDatabase) {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`drop database if exists ${multiMachineDatabase} with (force)`);
      await client.end();
    }
    await database?.drop();
    fs.rmSync(temp, { recursive: true, force: true });
  }, 60_000);

  for (const block of blocks.filter((b) => liveCommands(b).length > 0)) {
    const needs = blockNeeds(block);
    const first = liveCommands(block)[0]!.text.split('\n')[0]!;
    const title = `line ${block.line}: ${first.length > 80 ? `${first.slice(0, 80)}...` : first}${runsHere(needs) ? '' : ' (skipped: needs DATABASE_URL and REDIS_URL)'}`;
    it.skipIf(!runsHere(needs))(title, async () => {
      const ids = { byPrefix: new Map<string, string>() };
      const started: Background[] = [];
      for (const command of liveCommands(block)) {
        if (ranFirst.has(command)) continue;
        const server = await session.run(command, ids);
        if (server) started.push(server);
      }
      // Servers this block starts in the background: ready (database and Redis answer), then stopped.
      for (const server of started) {
        const port = session.portOf(server);
        await waitForOk(`http://127.0.0.1:${port}/readyz`, server, 20_000);
        await server.stop();
      }
    }, 120_000);
  }

  for (const { command, coverage } of proseRuns) {
    const skipped = coverage.by === 'live' && !runsHere(coverage.needs);
    it.skipIf(skipped)(`line ${command.line} (prose): ${command.text}${coverage.by === 'live' && coverage.runs ? ` (runs ${coverage.runs})` : ''}`, async () => {
      const outcome = proseOutcomes.get(command);
      if (!outcome) throw new Error('never started');
      const failed = await outcome;
      if (failed) throw failed;
    }, 120_000);
  }
});
