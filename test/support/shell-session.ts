import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { request } from 'undici';

// Commands run as a reader's terminal runs them: through bash, in the repository, with the variables
// the reader exported. A server started with `&` (or in a second terminal) is a process group of its
// own, so stopping it stops npm and the node process npm started.

export type Env = Record<string, string | undefined>;

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runBash(script: string, env: Env, cwd: string, timeoutMs = 120_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Background {
  output(): string;
  exited(): boolean;
  /** SIGTERM to the whole group; SIGKILL when something of it is still there after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /**
   * SIGTERM to the command's own process only (npm, as a reader's `kill` would send it); the processes
   * of its group still there after `graceMs` (none: all stopped), which are then killed.
   */
  terminate(graceMs?: number): Promise<string[]>;
  /** The command lines of the group's processes now (Linux /proc). */
  processes(): string[];
}

function groupProcesses(pgid: number): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The fields after the command name: state, ppid, pgrp, ...
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp === pgid) found.push(fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim());
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function startBackground(script: string, env: Env, cwd: string): Background {
  const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  let exited = false;
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  child.once('exit', () => (exited = true));
  const pid = child.pid!;
  return {
    output: () => output,
    exited: () => exited,
    async stop(graceMs = 15_000) {
      if (!groupAlive(pid)) return;
      process.kill(-pid, 'SIGTERM');
      const deadline = Date.now() + graceMs;
      while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    },
    async terminate(graceMs = 20_000) {
      if (!exited) process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + graceMs;
      while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const left = groupProcesses(pid);
      if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
      return left;
    },
    processes: () => groupProcesses(pid),
  };
}

/** Resolves when `url` answers 200; throws with the server's output when it exits or takes a minute. */
export async function waitForOk(url: string, server: Background, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.exited()) throw new Error(`the server exited before ${url} answered:\n${server.output()}`);
    try {
      const res = await request(url);
      await res.body.dump();
      if (res.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
