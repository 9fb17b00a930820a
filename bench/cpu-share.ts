import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';

// What the machine's two cores did during a run, measured rather than guessed: CPU seconds per
// process group from /proc, and what Postgres sessions were waiting on (pg_stat_activity samples).

const TICKS_PER_SECOND = 100;

function cpuTicks(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return 0;
  }
}

export const pidsOf = (name: string): number[] => {
  try {
    return execFileSync('pgrep', ['-x', name], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

export type Groups = Record<string, () => number[]>;

/** Starts counting; the returned function gives each group's share of the wall time in cores. */
export function startCpuCount(groups: Groups): () => Record<string, number> {
  const started = performance.now();
  const before = new Map<number, number>();
  for (const pids of Object.values(groups)) for (const pid of pids()) before.set(pid, cpuTicks(pid));
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const out: Record<string, number> = {};
    for (const [name, pids] of Object.entries(groups)) {
      // Postgres backends come and go: a process born mid-run counts from zero.
      const ticks = pids().reduce((sum, pid) => sum + cpuTicks(pid) - (before.get(pid) ?? 0), 0);
      out[name] = ticks / TICKS_PER_SECOND / seconds;
    }
    return out;
  };
}

/** Samples what the database's active sessions wait on, every `everyMs`, until stopped. */
export function startWaitSampling(url: string, everyMs = 50): () => Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  const counts: Record<string, number> = {};
  let samples = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query(
        `select state, coalesce(wait_event_type || ':' || wait_event, 'on CPU') as wait
           from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      );
      samples++;
      for (const row of rows) {
        const label = row.state === 'active' ? `active, ${row.wait}` : row.state === 'idle in transaction' ? 'idle in transaction (waiting for the gateway)' : 'idle';
        counts[label] = (counts[label] ?? 0) + 1;
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return async () => {
    running = false;
    await loop;
    await client.end();
    // Average number of sessions in each state at any moment.
    return Object.fromEntries(Object.entries(counts).map(([label, n]) => [label, n / Math.max(1, samples)]));
  };
}
