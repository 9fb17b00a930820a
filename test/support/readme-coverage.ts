import fs from 'node:fs';
import path from 'node:path';
import type { ReadmeCommand } from './readme-blocks.ts';

// Which proof covers each command of the README, in its shell blocks and in its prose
// (test/support/readme-inline.ts) (issue 26: the README, read top to bottom on a fresh clone, works
// as written). A command no rule covers fails test/readme-commands.test.ts, so a new README command
// comes with its proof.

const ROOT = path.resolve(import.meta.dirname, '../..');

export type Coverage =
  /**
   * (a) run against a live gateway by test/readme-commands.test.ts; some only where Postgres and Redis
   * are. `prints`: what its output must show. `runs`: what is run for a command whose arguments the
   * README leaves open (`...`).
   */
  | { by: 'live'; needs?: 'postgres+redis'; prints?: RegExp; runs?: string }
  /**
   * (a) a process that keeps running, started by test/readme-commands.test.ts beside the others: it
   * gets ready, then a SIGTERM to the process the command started (npm) stops every process it made.
   */
  | { by: 'process'; ready: ProcessReady }
  /** (b) run by a CI script: each step must be one of its command lines. */
  | { by: 'script'; steps: { file: string; line: RegExp }[] }
  /**
   * (c) run by another test file, which must contain `contains`; for an npm script, the script must
   * name `npmScript.includes`, what the test file exercises.
   */
  | { by: 'test file'; file: string; contains: string; npmScript?: { name: string; includes: string } }
  /** (d) needs the world outside this machine. */
  | { by: 'outside world'; reason: string };

/**
 * How a process command shows it is ready: `serves` (its own port answers /healthz; `silent`: a log
 * line it must not print, `forks`: it runs one process per core); `logs` (a log line);
 * `consoleDevServer` (the console's page on Vite's port, and a JSON route forwarded to the gateway on
 * PORT).
 */
export type ProcessReady =
  | { serves: true; silent?: RegExp; forks?: 'per core' }
  | { logs: RegExp }
  | { consoleDevServer: true };

const LIVE: Coverage = { by: 'live' };
const POSTGRES_REDIS: Coverage = { by: 'live', needs: 'postgres+redis' };
const FRESH_CLONE = 'scripts/fresh-clone-check.sh';
const CI = '.ci/run';

export interface Rule {
  command: RegExp;
  coverage: Coverage;
}

export const RULES: Rule[] = [
  { command: /^export [A-Z0-9_]+=\S+$/, coverage: LIVE },
  { command: /^curl -s (-X [A-Z]+ )?(http:\/\/)?(localhost|127\.0\.0\.1):8080\//, coverage: LIVE },
  { command: /^npm run gateway -- (?!worker$|--help$)/, coverage: LIVE },
  // The help lists the channel types from the registry, as the README says.
  { command: /^npm run gateway -- --help$/, coverage: { by: 'live', prints: /^ {4}ark {2,}image, video, avatar; options: /m } },
  // `...` is any of the CLI lines above; one runs here through the package's bin (tsx, no build).
  { command: /^npx gateway \.\.\.$/, coverage: { by: 'live', runs: 'npx gateway users list', prints: /"id": "usr_\w+"/ } },
  { command: /^npm run gateway -- worker$/, coverage: { by: 'process', ready: { logs: /^Gateway workers running \(no HTTP\)/m } } },
  { command: /^npm run dev$/, coverage: { by: 'process', ready: { serves: true } } },
  { command: /^CLUSTER=auto npm start$/, coverage: { by: 'process', ready: { serves: true, forks: 'per core' } } },
  { command: /^WORKERS=0 npm start$/, coverage: { by: 'process', ready: { serves: true, silent: /"msg":"workers started"/ } } },
  { command: /^npm run dev:console$/, coverage: { by: 'process', ready: { consoleDevServer: true } } },
  // The bundle the README's `npm start` built, started without the start script's young-generation and memory-reducer flags.
  { command: /^node --enable-source-maps --no-allocation-site-pretenuring dist\/server\/main\.js$/, coverage: { by: 'process', ready: { serves: true } } },
  { command: /^ADMIN_TOKEN=\$ADMIN_TOKEN npm start$/, coverage: LIVE },
  { command: /^psql -h \S+ -U \S+ -c 'create database \w+'$/, coverage: POSTGRES_REDIS },
  { command: /^PORT=\d+ npm start &$/, coverage: POSTGRES_REDIS },
  // `npm ci` stands for the README's `npm install`: on a fresh clone both install the lockfile's
  // tree, and `npm ci` fails where the lockfile and package.json disagree.
  {
    command: /^npm install && npm start$/,
    coverage: { by: 'script', steps: [{ file: FRESH_CLONE, line: /\bnpm ci\b/ }, { file: FRESH_CLONE, line: /\bnpm start\b/ }] },
  },
  {
    command: /^npm install && npm test$/,
    coverage: { by: 'script', steps: [{ file: CI, line: /^npm ci\b/ }, { file: CI, line: /^npm test$/ }] },
  },
  { command: /^npm start$/, coverage: { by: 'script', steps: [{ file: FRESH_CLONE, line: /^PORT=\S+ DATABASE_URL=\S+ npm start\b/ }] } },
  { command: /^npm test$/, coverage: { by: 'script', steps: [{ file: CI, line: /^npm test$/ }] } },
  { command: /^npm ci$/, coverage: { by: 'script', steps: [{ file: CI, line: /^npm ci\b/ }] } },
  { command: /^npm run typecheck$/, coverage: { by: 'script', steps: [{ file: CI, line: /^npm run typecheck$/ }] } },
  { command: /^apt-get install chromium$/, coverage: { by: 'script', steps: [{ file: CI, line: /\bapt-get install -y\b.*\bchromium\b/ }] } },
  // Not run here: it empties dist/console, which the browser tests beside this file are serving.
  // `npm run build` is what `npm start` runs first (prestart), which the fresh clone check runs.
  {
    command: /^npm run build$/,
    coverage: {
      by: 'script',
      steps: [
        { file: 'package.json', line: /^"build": "npm run build:console && npm run build:server",$/ },
        { file: 'package.json', line: /^"prestart": "npm run build:console --silent && npm run build:server --silent",$/ },
        { file: FRESH_CLONE, line: /^PORT=\S+ DATABASE_URL=\S+ npm start\b/ },
      ],
    },
  },
  {
    command: /^npm run build:console$/,
    coverage: { by: 'script', steps: [{ file: 'package.json', line: /^"pretest": "npm run build:console\b/ }, { file: CI, line: /^npm test$/ }] },
  },
  // Not run here: they write tracked files (docs/api.md, docs/screenshots); their tests check the same output.
  {
    command: /^npm run docs:api$/,
    coverage: { by: 'test file', file: 'test/api-doc.test.ts', contains: "from '../scripts/api-doc.ts'", npmScript: { name: 'docs:api', includes: 'scripts/api-doc.ts' } },
  },
  {
    command: /^npm run screenshots$/,
    coverage: {
      by: 'test file',
      file: 'test/console-browser.test.ts',
      contains: 'process.env.SCREENSHOTS_DIR',
      npmScript: { name: 'screenshots', includes: 'SCREENSHOTS_DIR=docs/screenshots vitest run test/console-browser.test.ts' },
    },
  },
  {
    command: /^DATABASE_URL=postgres:\/\/\S+ REDIS_URL=redis:\/\/\S+ npm test$/,
    coverage: { by: 'script', steps: [{ file: CI, line: /^DATABASE_URL="postgres:\/\/\S+" REDIS_URL="redis:\/\/\S+" npm test$/ }] },
  },
];

export function rulesFor(command: ReadmeCommand): Rule[] {
  return RULES.filter((rule) => rule.command.test(command.text));
}

/** The command's coverage, or undefined while it has none or more than one (the test says which). */
export function coverageOf(command: ReadmeCommand): Coverage | undefined {
  const rules = rulesFor(command);
  return rules.length === 1 ? rules[0]!.coverage : undefined;
}

/** A script's command lines: comments and `echo` lines only talk about the steps. */
export function scriptCommands(file: string): string[] {
  return fs
    .readFileSync(path.join(ROOT, file), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#') && !line.startsWith('echo '));
}
