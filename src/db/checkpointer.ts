import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite copies the WAL back into the database file in checkpoints. Left to the write connection, a
 * checkpoint ran on the event loop every ~1,000 WAL pages and took ~24 ms under the text load (its
 * fsyncs write back every page it copied), stalling every request in the process meanwhile. A thread
 * with its own connection now does that work in the background (PASSIVE checkpoints never wait for,
 * nor block, the writer). The write connection keeps its automatic checkpoint: under constant writes
 * the background never finds the WAL quiet, and only the writer, between two of its own commits,
 * can finish a checkpoint that lets the WAL start over; by then the background has copied and
 * synced nearly all of it, so that checkpoint is small. It gives up (busy) while the thread's
 * checkpoint runs and tries again after its next commit, so the WAL can pass its usual ~1,000
 * pages: measured up to ~15 MB with three writers on two busy cores (test/checkpointer.test.ts).
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
function checkpoint() {
  let writing = true;
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    // Quiet when nothing was added to the WAL since the last look and all of it is copied.
    writing = result.log !== last.log || result.checkpointed < result.log;
    last = result;
  } catch {
    // Busy (another checkpoint is running): look again soon.
  }
  setTimeout(checkpoint, writing ? workerData.busyMs : workerData.idleMs);
}
checkpoint();
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(file: string): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  // Every 5 ms while the WAL takes writes, every 100 ms once it is quiet.
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, busyMs: 5, idleMs: 100 } });
  worker.unref();
  // A checkpointer that fails leaves the write connection's own checkpoints, as before it existed.
  worker.on('error', () => undefined);
  return {
    // Termination waits for a checkpoint in progress to return (it runs in native code); SQLite
    // checkpoints are safe to cut between calls, and the thread's connection closes with it.
    stop: async () => void (await worker.terminate()),
  };
}
