import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

// Large prompts are counted on one thread of their own, started at the first one: counting takes
// ~1-3 µs per character of text the tokenizer has not seen, and on the event loop a 5 MB prompt
// stalled every other request for 13 s. Jobs wait their turn; each stops once past its limit.
//
// The thread is plain CommonJS. Run from the bundle (npm start), it requires the counter bundled
// beside it (dist/server/token-count.cjs); run from the sources (tsx, vitest, bin/gateway.js), it
// registers tsx and requires token-count.ts.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
if (workerData.tsx) require(workerData.tsx).register();
const { countTexts } = require(workerData.counter);
parentPort.on('message', ({ id, texts, limit }) => {
  try {
    parentPort.postMessage({ id, counts: countTexts(texts, limit) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;
interface Job {
  resolve(counts: number[] | null): void;
  reject(err: Error): void;
}

type Reply = { id: number; counts: number[] | null } | { id: number; error: string };

interface Thread {
  worker: Worker;
  jobs: Map<number, Job>;
}

let current: Thread | undefined;
let nextId = 0;

function start(): Thread {
  const require = createRequire(import.meta.url);
  const bundled = fileURLToPath(new URL('./token-count.cjs', import.meta.url));
  const workerData = fs.existsSync(bundled)
    ? { tsx: undefined, counter: bundled }
    : { tsx: require.resolve('tsx/cjs/api'), counter: fileURLToPath(new URL('./token-count.ts', import.meta.url)) };
  const thread: Thread = { worker: new Worker(SOURCE, { eval: true, workerData }), jobs: new Map() };
  const { worker, jobs } = thread;
  worker.on('message', (reply: Reply) => {
    const job = jobs.get(reply.id);
    jobs.delete(reply.id);
    // Only a job in progress keeps the process alive.
    if (jobs.size === 0) worker.unref();
    if ('error' in reply) job?.reject(new Error(`token thread: ${reply.error}`));
    else job?.resolve(reply.counts);
  });
  // A thread that failed fails its jobs; the next job starts a new one.
  const fail = (err: Error) => {
    if (current === thread) current = undefined;
    for (const job of jobs.values()) job.reject(err);
    jobs.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`token thread exited (${code})`)));
  worker.unref();
  return thread;
}

/** Each text's count off the event loop, or null once together they pass `limit`. */
export function countOffLoop(texts: string[], limit: number): Promise<number[] | null> {
  const thread = (current ??= start());
  const id = nextId++;
  return new Promise((resolve, reject) => {
    thread.jobs.set(id, { resolve, reject });
    thread.worker.ref();
    thread.worker.postMessage({ id, texts, limit });
  });
}
