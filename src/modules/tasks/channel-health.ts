import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';
import type { Channel } from '../../core/channel.ts';

// What the task engine tells the operator about a channel (shown by the console and `channels list`):
// submits that failed before the upstream accepted them, in a row, and a 401/403 that needs a new secret.

const MAX_ERROR_CHARS = 500;

/** A submit that failed before acceptance; `attention` when the upstream refused the channel's credentials. */
export async function channelFailed(db: Kysely<Database>, channelId: string, error: string, attention = false): Promise<void> {
  await db
    .updateTable('channels')
    .set((eb) => ({
      health_failures: eb('health_failures', '+', 1),
      health_error: error.slice(0, MAX_ERROR_CHARS),
      health_error_at: Date.now(),
      ...(attention ? { needs_attention: 1 } : {}),
    }))
    .where('id', '=', channelId)
    .execute();
}

/**
 * The upstream accepted a task: the failure count starts again and a past 401/403 is cleared. The
 * row the router holds may be a second old, so the database decides; a healthy row matches nothing.
 */
export async function channelAccepted(db: Kysely<Database>, channel: Channel): Promise<void> {
  await db
    .updateTable('channels')
    .set({ health_failures: 0, needs_attention: 0 })
    .where('id', '=', channel.id)
    .where((eb) => eb.or([eb('health_failures', '>', 0), eb('needs_attention', '=', 1)]))
    .execute();
}
