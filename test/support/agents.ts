import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The three coding agents of issue 33, installed from npm at pinned versions into a cache outside
// the repository (the tests must leave the working tree clean, and 700 MB of binaries do not belong
// in node_modules), then run one-shot in a throwaway HOME so no user config, login or history leaks
// in, with every update check, telemetry and survey switched off: the machine reaches nothing but
// the npm registry, and an agent waiting on a vendor host would hang the test.

export type AgentName = 'claude-code' | 'codex' | 'gemini-cli';

export const AGENTS: Record<AgentName, { pkg: string; version: string; bin: string }> = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', version: '2.1.197', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.171.0', bin: 'codex' },
  'gemini-cli': { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
};

export const AGENT_CACHE = process.env.GW_AGENT_CACHE ?? path.join(os.tmpdir(), 'gw-agents');
const INSTALLED = '.gw-installed'; // written last: a directory without it is a failed or running install

/** Where an agent's executable is, installing it first if needed. Under CI=true a failure throws; otherwise it returns the reason to skip. */
export async function installAgent(name: AgentName): Promise<{ bin: string } | { skip: string }> {
  const { pkg, version, bin } = AGENTS[name];
  const dir = path.join(AGENT_CACHE, `${pkg.replace('/', '+')}@${version}`);
  const exe = path.join(dir, 'node_modules', '.bin', bin);
  try {
    if (!fs.existsSync(path.join(dir, INSTALLED))) {
      await withLock(`${dir}.lock`, async () => {
        if (fs.existsSync(path.join(dir, INSTALLED))) return; // another test file installed it while we waited
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(dir, { recursive: true });
        await mustRun('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', `${pkg}@${version}`], { cwd: dir, timeoutMs: 300_000, env: process.env });
        // Claude Code's package ships a placeholder that its postinstall replaces with the native
        // binary; where npm skipped install scripts (ignore-scripts, allowScripts) it is run here.
        const postinstall = path.join(dir, 'node_modules', pkg, 'install.cjs');
        if (!versionOk(exe, version) && fs.existsSync(postinstall)) {
          await mustRun(process.execPath, [postinstall], { cwd: path.dirname(postinstall), env: process.env, timeoutMs: 120_000 });
        }
        if (!versionOk(exe, version)) throw new Error(`${exe} --version does not print ${version}`);
        fs.writeFileSync(path.join(dir, INSTALLED), `${new Date().toISOString()}\n`);
      });
    }
    return { bin: exe };
  } catch (err) {
    const msg = `could not install ${pkg}@${version} into ${dir}: ${(err as Error).message}`;
    if (process.env.CI === 'true') throw new Error(msg);
    return { skip: msg };
  }
}

async function mustRun(cmd: string, args: string[], o: Parameters<typeof run>[2]): Promise<void> {
  const r = await run(cmd, args, o);
  if (r.code === 0) return;
  const lines = r.stderr.trim().split('\n');
  const errors = lines.filter((l) => l.startsWith('npm error')).slice(0, 3); // npm says what failed first, then a log path
  throw new Error(`${path.basename(cmd)} ${args[0]} exited ${r.code}${r.timedOut ? ' (timed out)' : ''}: ${(errors.length ? errors : lines.slice(-5)).join(' | ')}`);
}

function versionOk(exe: string, version: string): boolean {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-agent-version-')); // `--version` already writes state into HOME
  try {
    const v = spawnSync(exe, ['--version'], { encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, GEMINI_CLI_HOME: home } });
    return v.status === 0 && v.stdout.includes(version);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** A lock directory (mkdir is atomic) so two test files do not install into one directory at once. */
async function withLock(lock: string, fn: () => Promise<void>): Promise<void> {
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  for (const start = Date.now(); ; ) {
    try { fs.mkdirSync(lock); break; } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A holder that died leaves its lock: an install takes well under ten minutes.
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 600_000) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() - start > 900_000) throw new Error(`timed out waiting for ${lock}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try { await fn(); } finally { fs.rmSync(lock, { recursive: true, force: true }); }
}

export interface AgentResult { code: number | null; stdout: string; stderr: string; timedOut: boolean }

/** Runs a command in its own process group, killed whole at the timeout (Gemini CLI relaunches itself as a child). */
export function run(cmd: string, args: string[], o: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<AgentResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
    child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
    const timer = setTimeout(() => { timedOut = true; try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, o.timeoutMs);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code) => {
      clearTimeout(timer);
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* no shell or server the agent started outlives it */ }
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

export interface AgentRunOptions {
  /** What the agent's own base-URL setting takes (see each runner). */
  baseUrl: string;
  apiKey: string;
  prompt: string;
  model: string;
  /** Working directory; a fresh empty one by default (a repo's CLAUDE.md/AGENTS.md/GEMINI.md would leak into the prompt). */
  cwd?: string;
  /** Let the agent run its shell tool without asking. */
  allowTools?: boolean;
  timeoutMs?: number;
  /** When set, HTTP(S)_PROXY for anything not on 127.0.0.1: a local sink that records where the agent tried to go. */
  proxyUrl?: string;
  /** Extra environment, applied last (an empty string switches a default off). */
  env?: Record<string, string>;
  /** Extra command-line options (before the prompt for Codex, whose prompt comes last). */
  args?: string[];
}

/** A throwaway home and working directory, and the environment every agent gets: nothing inherited but PATH. */
export function sandbox(name: string, o: AgentRunOptions): { home: string; cwd: string; env: NodeJS.ProcessEnv; cleanup(): void } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `gw-${name}-home-`));
  const cwd = o.cwd ?? fs.mkdtempSync(path.join(os.tmpdir(), `gw-${name}-work-`));
  const cleanup = () => { for (const d of o.cwd ? [home] : [home, cwd]) fs.rmSync(d, { recursive: true, force: true }); };
  fs.mkdirSync(path.join(home, 'tmp')); // the agents' own temp files (Claude Code's /tmp/claude-<uid>) go with the home
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: path.join(home, 'tmp'), LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1' };
  if (o.proxyUrl) Object.assign(env, { HTTPS_PROXY: o.proxyUrl, HTTP_PROXY: o.proxyUrl, https_proxy: o.proxyUrl, http_proxy: o.proxyUrl, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' });
  return { home, cwd, env, cleanup };
}

async function runAgent(name: AgentName, args: string[], box: ReturnType<typeof sandbox>, o: AgentRunOptions): Promise<AgentResult> {
  try {
    const r = await installAgent(name);
    if ('skip' in r) throw new Error(r.skip);
    return await run(r.bin, args, { cwd: box.cwd, env: { ...box.env, ...o.env }, timeoutMs: o.timeoutMs ?? 90_000 });
  } finally {
    box.cleanup();
  }
}

/** Claude Code `-p`: baseUrl is ANTHROPIC_BASE_URL (it posts to {baseUrl}/v1/messages?beta=true; without a proxy it first warms the connection with HEAD {baseUrl}/). */
export async function runClaudeCode(o: AgentRunOptions): Promise<AgentResult> {
  const box = sandbox('claude', o);
  const { home, cwd, env } = box;
  Object.assign(env, {
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: o.baseUrl,
    ANTHROPIC_API_KEY: o.apiKey, // sent as x-api-key
    // Side requests (titles, summaries) would otherwise name a real Haiku the gateway may not sell.
    ANTHROPIC_SMALL_FAST_MODEL: o.model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: o.model,
    CLAUDE_CODE_MAX_RETRIES: '0', // a refused request fails the run now, not after minutes of backoff
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_GROWTHBOOK: '1',
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
    DISABLE_INSTALLATION_CHECKS: '1',
  });
  // --dangerously-skip-permissions is refused as root (CI containers): allow the one tool instead.
  const args = ['-p', o.prompt, '--model', o.model, '--output-format', 'text', ...(o.allowTools ? ['--allowedTools', 'Bash'] : []), ...(o.args ?? [])];
  return runAgent('claude-code', args, box, o);
}

/** Codex `exec`: baseUrl is the provider's base_url (it posts to {baseUrl}/responses, wire_api "responses"). */
export async function runCodex(o: AgentRunOptions): Promise<AgentResult> {
  const box = sandbox('codex', o);
  const { home, cwd, env } = box;
  const codexHome = path.join(home, '.codex');
  fs.mkdirSync(codexHome);
  Object.assign(env, { CODEX_HOME: codexHome, GW_API_KEY: o.apiKey }); // sent as Authorization: Bearer
  const provider = `{ name = "gateway", base_url = ${JSON.stringify(o.baseUrl)}, env_key = "GW_API_KEY", wire_api = "responses", request_max_retries = 0, stream_max_retries = 0 }`;
  const args = [
    'exec', '--skip-git-repo-check', '--ephemeral', '--color', 'never', '-C', cwd, '-m', o.model,
    '-c', 'model_provider="gateway"', '-c', `model_providers.gateway=${provider}`,
    '-c', 'analytics.enabled=false', '-c', 'check_for_update_on_startup=false',
    '--disable', 'plugins', '--disable', 'remote_plugin', '--disable', 'apps',
    // No sandbox: bubblewrap/landlock are not available in every container; approvals never asked.
    ...(o.allowTools ? ['--dangerously-bypass-approvals-and-sandbox'] : ['--sandbox', 'read-only', '-c', 'approval_policy="never"']),
    ...(o.args ?? []),
    o.prompt,
  ];
  return runAgent('codex', args, box, o);
}

/** Gemini CLI `-p`: baseUrl is GOOGLE_GEMINI_BASE_URL (it posts to {baseUrl}/v1beta/models/{model}:streamGenerateContent?alt=sse). */
export async function runGeminiCli(o: AgentRunOptions): Promise<AgentResult> {
  const box = sandbox('gemini', o);
  const { home, cwd, env } = box;
  fs.mkdirSync(path.join(home, '.gemini'));
  // Usage statistics (on by default) go to Google's Clearcut; the rest would check for updates or reach for an IDE.
  const settings = {
    // One attempt: a refused request fails the run now, not after ten with backoff.
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, checkpointing: { enabled: false }, maxAttempts: 1, retryFetchErrors: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    ide: { enabled: false },
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
  };
  fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2));
  Object.assign(env, {
    GEMINI_CLI_HOME: home,
    GEMINI_API_KEY: o.apiKey, // sent as x-goog-api-key
    GOOGLE_GEMINI_BASE_URL: o.baseUrl,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    GEMINI_CLI_NO_RELAUNCH: 'true', // it would re-spawn itself for a bigger heap: a second start for nothing
  });
  const args = ['-p', o.prompt, '-m', o.model, '--output-format', 'text', ...(o.allowTools ? ['--yolo'] : []), ...(o.args ?? [])];
  return runAgent('gemini-cli', args, box, o);
}
