import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Dialect } from '../../db/db.ts';
import { GroupCommit } from '../../db/group-commit.ts';
import type { Database } from '../../db/types.ts';
import type { CachedKey } from '../../core/key.ts';
import { newId } from '../../lib/ids.ts';
import { InsufficientFunds } from '../billing/ledger.ts';
import { NOTHING_USED, type TextUsage } from '../../core/text/provider.ts';
import { heldCall, movementOf, NO_COST, settleOp, usageRow, type CallMoney, type HeldCall, type HoldRequest, type TextOutcome } from './call-money.ts';
import type { UsageCost } from '../billing/usage-cost.ts';
import { writeTextMoneyCarefully } from './careful.ts';
import { drainKeyFloats } from './drain.ts';
import { TextFloat } from './float.ts';
import { TextFloats } from './floats.ts';
import { HoldAlreadySettled, keyIdOf, type TextMoneyOp, type TextSpend } from './ops.ts';
import { pendingOf, roomFor, type PendingOf } from './pending.ts';
import { sweepEveryMs, sweepLostHolds } from './sweeper.ts';
import { writeTextMoneyWhole } from './whole.ts';

// Text money's book: the group commit of its ops (holds, settlements and a float's spends, releases
// and close: a batch written whole when it can be, else op by op), the floats calls take their holds
// from, and the sweeper. It is the only thing outside this folder that holds the others.

export interface TextMoneyDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  logger: Logger;
  config: Pick<Config, 'writeBatchesInFlight' | 'textFloatCalls' | 'textFloatIdleMs' | 'textHoldMaxAgeMs'>;
  /** After each commit, with the keys whose money it moved (the quota snapshots drop theirs). */
  committed(keyIds: string[]): void;
}

// index.ts's createTextMoney returns it as the TextMoney door, which checks that it is one.
export class TextMoneyBook extends GroupCommit<TextMoneyOp> {
  readonly floats: TextFloats;
  private sweeper?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;

  constructor(private readonly deps: TextMoneyDeps) {
    // SQLite has one writer: one batch at a time.
    const parallel = deps.dialect === 'sqlite' ? 1 : deps.config.writeBatchesInFlight;
    super(deps.db, parallel, writeTextMoneyCarefully, (ops) => deps.committed(ops.map((op) => keyIdOf(op)!).filter(Boolean)), writeTextMoneyWhole(deps.db));
    this.floats = new TextFloats({ db: deps.db, textMoney: this, logger: deps.logger, config: deps.config });
  }

  hold(request: HoldRequest): CallMoney | Promise<CallMoney> {
    const hold = heldCall(request);
    const float = this.floats.take(hold);
    if (float instanceof TextFloat) return { hold, float };
    return this.holdLater(hold, float);
  }

  private async holdLater(hold: HeldCall, taking: Promise<TextFloat | undefined> | undefined): Promise<CallMoney> {
    const float = await taking;
    if (float) return { hold, float };
    hold.call_id = newId('txt');
    try {
      await this.holdAlone(hold);
    } catch (err) {
      // Money this process's floats hold for the account is money the call may have: give it back, once.
      if (!(err instanceof InsufficientFunds) || !(await this.floats.release(hold.user_id))) throw err;
      await this.holdAlone(hold);
    }
    return { hold };
  }

  private holdAlone(hold: HeldCall): Promise<void> {
    return this.add({ kind: 'hold', movement: movementOf(hold, hold.amount), hold });
  }

  /**
   * Queued, not waited for: it commits with the next batch (usually the next call's hold) or within a
   * few milliseconds. Until then the call's whole hold stays taken; if the process dies first, the
   * sweeper gives it back in full (as for a call cut off mid-way). A call taken from a float settles
   * as a spend of that float (floats.ts).
   */
  settle(money: CallMoney, cost: UsageCost, usage: TextUsage, status: TextOutcome): void {
    const { hold, float } = money;
    // Never capped at the hold: what the upstream reported is what the call used (settleOp charges the overrun).
    const charged = status === 'failed' ? NO_COST : cost;
    if (float) {
      const spend: TextSpend = { kind: 'spend', callId: float.id, cost: charged.total, usage: usageRow(hold, charged, usage, status), keyId: hold.key_id };
      this.floats.spend(float, hold.amount, spend, (err) => this.settleFailed(hold, float, err));
    } else {
      this.addSoon(settleOp(hold, charged, usage, status)).catch((err) => this.settleFailed(hold, undefined, err));
    }
  }

  release(money: CallMoney): void {
    this.settle(money, NO_COST, NOTHING_USED, 'failed');
  }

  pendingFor(who: PendingOf, db: Kysely<Database> = this.deps.db) {
    return pendingOf(db, who);
  }

  drainKey(trx: Transaction<Database>, keyId: string): Promise<void> {
    return drainKeyFloats(trx, keyId);
  }

  keyChanged(keyId: string): void {
    this.floats.drainKey(keyId);
  }

  async couldPay(key: Pick<CachedKey, 'id' | 'user_id'>, amount: number): Promise<boolean> {
    // With a float of this process open for the account, its money may come back to the call: the hold decides.
    if (this.floats.holdsFor(key.user_id)) return true;
    return (await roomFor(this.deps.db, key.id)) >= amount;
  }

  start(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.sweep().catch((err) => this.deps.logger.error({ err }, 'text hold sweep failed')), sweepEveryMs(this.deps.config.textHoldMaxAgeMs));
    this.sweeper.unref();
  }

  /** One pass of the sweeper (start() runs it on a timer). */
  sweep(now?: number): Promise<number> {
    const deps = { db: this.deps.db, logger: this.deps.logger, commits: this, maxAgeMs: this.deps.config.textHoldMaxAgeMs };
    const sweeping = sweepLostHolds(deps, now);
    this.sweeping = sweeping.catch(() => undefined);
    return sweeping;
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await this.sweeping;
    // Each float closes once its queued spends have committed (a call answered in the last
    // milliseconds); then the calls' own settlements still queued are written.
    await this.floats.stop();
    await this.flush();
  }

  private settleFailed(hold: HeldCall, float: TextFloat | undefined, err: unknown): void {
    const ids = float ? { floatId: float.id, reqId: hold.request_id } : { callId: hold.call_id, reqId: hold.request_id };
    // Ran past the sweeper's age and was given back in full already: this call stays free.
    if (err instanceof HoldAlreadySettled) {
      this.deps.logger.warn(ids, 'text call settled after its hold was swept; not charged');
    } else {
      this.deps.logger.error({ err, ...ids }, 'text settlement failed; the sweeper gives the hold back');
    }
  }
}
