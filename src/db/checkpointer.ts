import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite copies the WAL back into the database file in checkpoints. Left to the write connection, a
 * checkpoint ran on the event loop every ~1,000 WAL pages and took ~24 ms under the text load (its
 * fsyncs write back every page it copied), stalling every request in the process meanwhile. A thread
 * with its own connection does that work in the background (PASSIVE checkpoints never wait for,
 * nor block, the writer). The write connection keeps its automatic checkpoint: under constant writes
 * the background never finds the WAL quiet, and only the writer, between two of its own commits,
 * can finish a checkpoint that lets the WAL start over; by then the background has copied and
 * synced nearly all of it, so that checkpoint is small. It gives up (busy) while the thread's
 * checkpoint runs and tries again after its next commit, so the WAL can pass its usual ~1,000
 * pages: measured up to ~15 MB with three writers on two busy cores (test/checkpointer.test.ts).
 * The thread spaces its checkpoints to up to 2,000 new frames each (every 100-400 ms): each costs
 * two fsyncs, a page written by many commits is copied once per checkpoint, and every checkpoint
 * that catches up lets the writer start the WAL over, which syncs the WAL's header on the event
 * loop (~1 ms here). Under the text bench, checkpoints every 5-50 ms (~300 frames) meant ~36
 * checkpoints a second and ~30 of those syncs on the event loop; at 100-400 ms, ~5 and ~2, and a
 * text call took ~6% less CPU. The price: with synchronous=NORMAL
 * the WAL is synced at checkpoints, so a power loss (not a crash of the process) can lose up to
 * ~400 ms of commits instead of ~50 ms.
 * An idea not taken: having the thread pause near 1,000 pages to leave the writer room made the
 * writer do the copying (and its fsyncs) again, and its stalls came back.
 */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');
let last = { log: 0, checkpointed: 0 };
let interval = workerData.minMs;
function checkpoint() {
  let writing = true;
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    // Quiet when nothing was added to the WAL since the last look and all of it is copied.
    writing = result.log !== last.log || result.checkpointed < result.log;
    // Each checkpoint pays two fsyncs, and a page written many times is copied once per checkpoint:
    // aim for a few thousand new frames per checkpoint (see startCheckpointer).
    const added = result.log >= last.log ? result.log - last.log : result.log;
    if (added < workerData.targetFrames / 2) interval = Math.min(workerData.maxMs, interval * 2);
    else if (added > workerData.targetFrames) interval = Math.max(workerData.minMs, interval / 2);
    last = result;
  } catch {
    // Busy (another checkpoint is running): look again soon.
  }
  setTimeout(checkpoint, writing ? interval : workerData.idleMs);
}
checkpoint();
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(file: string): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  // Every 100-400 ms while the WAL takes writes (up to ~2,000 new frames each time), every 100 ms once it is quiet.
  const workerData = { driver, file, minMs: 100, maxMs: 400, targetFrames: 2000, idleMs: 100 };
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
  worker.unref();
  // A checkpointer that fails leaves the write connection's own checkpoints, as before it existed.
  worker.on('error', () => undefined);
  return {
    // Termination waits for a checkpoint in progress to return (it runs in native code); SQLite
    // checkpoints are safe to cut between calls, and the thread's connection closes with it.
    stop: async () => void (await worker.terminate()),
  };
}
