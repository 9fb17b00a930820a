import type { Kysely } from 'kysely';
import type { Database, Task } from '../../db/types.ts';
import type { Channel } from '../../core/channel.ts';

// Admission control: a channel's `options.max_in_flight` bounds the tasks it has at once
// (ModelArk queues about 120 per account and refuses more). A task over the limit stays `submitted`
// with progress 0 in our queue, and tasks leave it in submit order: a task goes only when the free
// slots outnumber the tasks for this channel's models that were submitted before it. Nothing is
// stored for this; every process computes the same answer from the tasks table, so a crash loses
// no place in the queue and the deadline sweeper still fails tasks that wait too long.

export function maxInFlight(channel: Channel): number | undefined {
  const value = channel.options.max_in_flight;
  return Number.isInteger(value) && (value as number) > 0 ? (value as number) : undefined;
}

/** True when `task` may be handed to `channel` now. */
export async function admitted(db: Kysely<Database>, channel: Channel, task: Task): Promise<boolean> {
  const max = maxInFlight(channel);
  if (max === undefined) return true;
  const models = [...channel.models];
  // Both counts in one statement, so one snapshot: counted apart, a task moving from submitted to
  // processing between the two reads was in neither, and one task too many went out.
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('tasks').select((e) => e.fn.countAll().as('n')).where('channel_id', '=', channel.id).where('status', '=', 'processing').as('in_flight'),
      // Task ids are time-ordered (ULIDs): a smaller id was submitted earlier.
      eb
        .selectFrom('tasks')
        .select((e) => e.fn.countAll().as('n'))
        .where('status', '=', 'submitted')
        .where('model', 'in', models.length > 0 ? models : [task.model])
        .where('id', '<', task.id)
        .as('ahead'),
    ])
    .executeTakeFirst();
  const inFlight = Number(row?.in_flight ?? 0);
  if (inFlight >= max) return false;
  const ahead = Number(row?.ahead ?? 0);
  return ahead < max - inFlight;
}
