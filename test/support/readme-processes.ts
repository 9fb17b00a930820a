import os from 'node:os';
import { stripVTControlCharacters } from 'node:util';
import { request } from 'undici';
import { freePort } from './gateway-process.ts';
import type { ProcessReady } from './readme-coverage.ts';
import { startBackground, waitForOk, type Background, type Env } from './shell-session.ts';

// A README command that keeps running (a server, the workers, the console's dev server), run as a
// reader runs it: started, checked to do what the README says, then stopped by a SIGTERM to npm, after
// which none of the processes it started may be left.

export interface ProcessSurroundings {
  root: string;
  env: Env;
  /** The demo key of the live gateway on env.PORT, for a route the console's dev server forwards. */
  demoKey: string;
}

const TIMEOUT_MS = 60_000;

export async function checkProcess(text: string, ready: ProcessReady, at: ProcessSurroundings): Promise<void> {
  const env = { ...at.env };
  // A server gets a port of its own; the console's dev server forwards to the live gateway's PORT.
  if ('serves' in ready) env.PORT = String(await freePort());
  const running = startBackground(text, env, at.root);
  try {
    await whenReady(running, ready, Number(env.PORT), at.demoKey);
  } catch (err) {
    await running.stop();
    throw new Error(`${text}: ${err instanceof Error ? err.message : String(err)}\n${running.output()}`);
  }
  const left = await running.terminate();
  if (left.length > 0) throw new Error(`${text}: still running after SIGTERM to npm:\n${left.join('\n')}\n${running.output()}`);
}

async function until<T>(what: string, running: Background, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (const deadline = Date.now() + TIMEOUT_MS; ; ) {
    const found = await probe();
    if (found !== undefined) return found;
    if (running.exited()) throw new Error(`exited before ${what}`);
    if (Date.now() > deadline) throw new Error(`no ${what} within ${TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function whenReady(running: Background, ready: ProcessReady, port: number, demoKey: string): Promise<void> {
  if ('logs' in ready) {
    await until(`log line ${ready.logs}`, running, () => (ready.logs.test(running.output()) ? true : undefined));
    return;
  }
  if ('serves' in ready) {
    await waitForOk(`http://127.0.0.1:${port}/healthz`, running, TIMEOUT_MS);
    // The welcome lines come after every start-up log line on the same stdout.
    await until('welcome line', running, () => (/^(Gateway listening on|A demo account)/m.test(running.output()) ? true : undefined));
    if (ready.silent?.test(running.output())) throw new Error(`printed ${ready.silent}`);
    if (ready.forks === 'per core') {
      const expected = 1 + os.availableParallelism();
      const serving = () => running.processes().filter((command) => command.includes('dist/server/main.js')).length;
      await until(`${expected} processes running dist/server/main.js (a primary and one per core)`, running, () => (serving() === expected ? true : undefined));
    }
    return;
  }
  const page = await until("Vite's local address", running, () => /Local:\s+(http:\/\/\S+)/.exec(stripVTControlCharacters(running.output()))?.[1]);
  const html = await request(page);
  const body = await html.body.text();
  if (html.statusCode !== 200 || !body.includes('<div id="root">')) throw new Error(`${page} answered ${html.statusCode}: ${body.slice(0, 200)}`);
  const forwarded = await request(new URL('/v1/balance', page), { headers: { authorization: `Bearer ${demoKey}` } });
  const balance = await forwarded.body.text();
  if (forwarded.statusCode !== 200 || !balance.includes('"success":true')) {
    throw new Error(`/v1/balance through Vite (to the gateway on :${port}) answered ${forwarded.statusCode}: ${balance}`);
  }
}
