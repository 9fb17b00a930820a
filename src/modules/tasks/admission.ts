import type { Kysely } from 'kysely';
import type { Channel, Database, Task } from '../../db/types.ts';

// Admission control (issue 23): a channel's `options.max_in_flight` bounds the tasks it has at once
// (ModelArk queues about 120 per account and refuses more). A task over the limit stays `submitted`
// with progress 0 in our queue, and tasks leave it in submit order: a task goes only when the free
// slots outnumber the tasks for this channel's models that were submitted before it. Nothing is
// stored for this; every process computes the same answer from the tasks table, so a crash loses
// no place in the queue and the deadline sweeper still fails tasks that wait too long.

export function maxInFlight(channel: Channel): number | undefined {
  try {
    const value = (JSON.parse(channel.options || '{}') as { max_in_flight?: unknown }).max_in_flight;
    return Number.isInteger(value) && (value as number) > 0 ? (value as number) : undefined;
  } catch {
    return undefined;
  }
}

const count = (row: { n: number | string | bigint } | undefined) => Number(row?.n ?? 0);

/** True when `task` may be handed to `channel` now. */
export async function admitted(db: Kysely<Database>, channel: Channel, task: Task): Promise<boolean> {
  const max = maxInFlight(channel);
  if (max === undefined) return true;
  const inFlight = count(
    await db.selectFrom('tasks').select((eb) => eb.fn.countAll().as('n')).where('channel_id', '=', channel.id).where('status', '=', 'processing').executeTakeFirst(),
  );
  if (inFlight >= max) return false;
  const models = JSON.parse(channel.models) as string[];
  // Task ids are time-ordered (ULIDs): a smaller id was submitted earlier.
  const ahead = count(
    await db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'submitted')
      .where('model', 'in', models.length > 0 ? models : [task.model])
      .where('id', '<', task.id)
      .executeTakeFirst(),
  );
  return ahead < max - inFlight;
}
