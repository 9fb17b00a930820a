import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Database, Task, TasksTable, TaskStatus } from '../../db/types.ts';
import { preparedQuery } from '../../db/prepared.ts';
import type { KindParams } from '../../core/task-params.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** A task's kind with its parameters, read from the stored JSON here and nowhere else. */
export function kindParams(task: Pick<Task, 'kind' | 'params'>): KindParams {
  return { kind: task.kind, params: JSON.parse(task.params) } as KindParams;
}

export async function insertTasks(db: Executor, tasks: Task[]): Promise<void> {
  // Well under the engines' limits on bound parameters (23 columns x 400 rows).
  for (let i = 0; i < tasks.length; i += 400) await db.insertInto('tasks').values(tasks.slice(i, i + 400)).execute();
}

const taskById = preparedQuery((db, id: string) => db.selectFrom('tasks').selectAll().where('id', '=', id));

export async function getTask(db: Executor, id: string): Promise<Task | undefined> {
  return (await taskById(db, id))[0];
}

/** The account's own tasks among `ids` (another account's and unknown ids are not there), in no order. */
export function getOwnTasks(db: Executor, userId: string, ids: string[]): Promise<Task[]> {
  return db.selectFrom('tasks').selectAll().where('id', 'in', ids).where('user_id', '=', userId).execute();
}

/**
 * Compare-and-set: changes the task only while it is in one of `from`. Every state change goes
 * through here, so two workers (or a worker and the deadline sweeper) can never both win.
 */
export async function transition(
  db: Executor,
  id: string,
  from: TaskStatus[],
  changes: Updateable<TasksTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ ...changes, updated_at: Date.now() })
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export function overdueTasks(db: Executor, now: number, limit: number): Promise<Task[]> {
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('status', 'in', ['submitted', 'processing'])
    .where('deadline_at', '<', now)
    .limit(limit)
    .execute();
}

export function listTasks(db: Executor, filter: { userId?: string; limit: number; before?: string }): Promise<Task[]> {
  let query = db.selectFrom('tasks').selectAll().orderBy('id', 'desc').limit(filter.limit);
  if (filter.userId) query = query.where('user_id', '=', filter.userId);
  if (filter.before) query = query.where('id', '<', filter.before);
  return query.execute();
}

/** A new round of callback attempts (an operator's redelivery); attempts are counted per round. */
export async function bumpWebhookRound(db: Executor, id: string): Promise<void> {
  await db.updateTable('tasks').set((eb) => ({ webhook_round: eb('webhook_round', '+', 1) })).where('id', '=', id).execute();
}
