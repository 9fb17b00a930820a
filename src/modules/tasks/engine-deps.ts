import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { TaskProvider } from '../../core/task-provider.ts';
import type { Database, Task } from '../../db/types.ts';
import type { Pricing } from '../billing/pricing.ts';
import type { ChannelRouter } from '../channels/channel-router.ts';
import type { ResultDeps } from './task-results.ts';
import type { endTask } from './tasks.service.ts';

// What the task engine's handlers run on (the worker, the failover and the upstream cancel): made
// from the app context by engine.ts.

/** The prices a task's account pays now: its group's when the engine knows groups, else the operator's table. */
export const pricesOf = async (deps: TaskEngineDeps, task: Task): Promise<Pricing> => (deps.pricingOf ? deps.pricingOf(task) : deps.pricing);

export interface TaskEngineDeps {
  db: Kysely<Database>;
  logger: Logger;
  pricing: Pricing;
  /** The prices a task's account pays now (its group's): a per-token task settles its tokens at them. */
  pricingOf?: (task: Task) => Pricing | Promise<Pricing>;
  channels: ChannelRouter;
  providerFor(type: string): TaskProvider | undefined;
  /** Runs in the ending's transaction (callbacks enqueue their delivery here). */
  onEnded?: Parameters<typeof endTask>[4];
  /** Runs after the ending committed (balance snapshots are dropped here). */
  afterEnded?: (task: Task) => void;
  /** Where result files are stored before a task completes. */
  results: ResultDeps;
  /** How soon a task held by admission control asks again. */
  admissionRetryMs?: number;
}
