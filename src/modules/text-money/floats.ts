import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { GroupCommit } from '../../db/group-commit.ts';
import type { Database } from '../../db/types.ts';
import { newId } from '../../lib/ids.ts';
import { InsufficientFunds } from '../billing/ledger.ts';
import type { HeldCall } from './call-money.ts';
import { HoldAlreadySettled, type TextMoneyOp, type TextSpend } from './ops.ts';
import { TextFloat } from './float.ts';
import { roomFor } from './pending.ts';

// A durable hold per call costs a commit before the upstream is even asked (measured: 157-217 µs
// of a ~0.65 ms call on the sequential probe). So each process holds a float per key: one
// ordinary durable hold worth TEXT_FLOAT_CALLS calls, from which calls take their holds in memory.
// A call's settlement adds its cost to the float's `spent` (with its usage row); closing the float
// gives back the rest. If the process dies, the sweeper closes the float like any lost hold
// (sweeper.ts), so the calls it settled stay charged and the rest is given back.
//
// A float is taken only while the account (and a limited key) keeps HEADROOM times the float
// besides it, so another payer is rarely refused for money a float holds. When the money runs
// short, a call that cannot be held gives the process's floats of that account back first, so
// within one process a 402 comes exactly when it would without floats.

const HEADROOM = 8;
/** A float's `text_holds` row has this endpoint (the sweeper closes it rather than settling a call). */
export const FLOAT_ENDPOINT = 'float';
/**
 * How long a call's spend may wait for company. Nobody waits on it (a balance read or shutdown
 * writes it at once), and a batch costs one commit whatever its size: under load a 2 ms wait wrote
 * ~8 spends a commit and SQLite took ~30 µs of each call. A process that dies loses at most this
 * much of spends: those calls are not charged, as with a settlement that did not commit.
 */
const SPEND_WITHIN_MS = 10;
/** A float that ran out sooner than this was too small for the key's traffic: the next one is twice as big. */
const SHORT_LIFE_MS = 1000;
const MAX_GROWTH = 64;
/** After a float could not be taken (too little money), calls of that key hold alone for this long. */
const NO_FLOAT_MS = 1000;

interface FloatDeps {
  db: Kysely<Database>;
  textMoney: GroupCommit<TextMoneyOp>;
  logger: Logger;
  config: { textFloatCalls: number; textFloatIdleMs: number; textHoldMaxAgeMs: number };
}

export class TextFloats {
  /** The float new calls of a key take from. */
  private readonly current = new Map<string, TextFloat>();
  /** Every open float, the current ones and those retiring until their last call settles. */
  private readonly open = new Set<TextFloat>();
  private readonly opening = new Map<string, Promise<TextFloat | undefined>>();
  /** Floats out of `open` whose close has not committed: their money is on its way back to the account. */
  private readonly closing = new Map<TextFloat, Promise<void>>();
  private readonly noFloatUntil = new Map<string, number>();
  /**
   * Per key, how many times TEXT_FLOAT_CALLS the next float holds: 50 calls in flight at once need
   * more than 32 calls' worth, or every few milliseconds each caller would wait for a new float.
   */
  private readonly growth = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  /** Well before the sweeper's age, so the sweeper only ever closes the float of a dead process. */
  private readonly maxLifeMs: number;

  constructor(private readonly deps: FloatDeps) {
    this.maxLifeMs = Math.min(60_000, deps.config.textHoldMaxAgeMs / 4);
    const every = Math.max(20, Math.min(1000, deps.config.textFloatIdleMs / 2, this.maxLifeMs / 2));
    this.timer = setInterval(() => this.retireIdle(), every).unref();
  }

  /**
   * Takes a call's hold from this process's float for its key; undefined = the call holds alone.
   * Synchronous while the key's float has room (nearly every call): a promise only when a float
   * must be opened.
   */
  take(hold: HeldCall): TextFloat | undefined | Promise<TextFloat | undefined> {
    if (this.deps.config.textFloatCalls === 0) return undefined;
    const current = this.current.get(hold.key_id);
    if (current && this.fits(current, hold.amount)) return this.reserve(current, hold.amount);
    if (current && hold.amount > current.amount) return undefined;
    if (current) {
      if (Date.now() - current.openedAt < SHORT_LIFE_MS) this.growth.set(hold.key_id, Math.min(MAX_GROWTH, 2 * (this.growth.get(hold.key_id) ?? 1)));
      this.retire(current);
    }
    if ((this.noFloatUntil.get(hold.key_id) ?? 0) > Date.now()) return undefined;
    return this.takeFromNew(hold);
  }

  private async takeFromNew(hold: HeldCall): Promise<TextFloat | undefined> {
    let opening = this.opening.get(hold.key_id);
    if (!opening) {
      opening = this.openFloat(hold).finally(() => this.opening.delete(hold.key_id));
      this.opening.set(hold.key_id, opening);
    }
    const float = await opening;
    return float && this.fits(float, hold.amount) ? this.reserve(float, hold.amount) : undefined;
  }

  /** Settles a call taken from `float`: its cost is spent, the rest of its hold is free again. */
  spend(float: TextFloat, held: number, op: TextSpend, onError: (err: unknown) => void): void {
    float.reserved -= held;
    float.spent += op.cost;
    float.calls--;
    float.unsettledSpends++;
    // A callback, not a promise: a promise with its .catch and .finally was measurable per call.
    this.deps.textMoney.queue(op, SPEND_WITHIN_MS, (err) => {
      float.spendSettled();
      if (err !== undefined) onError(err);
    });
    if (float.retiring && float.calls === 0) void this.close(float);
  }

  /**
   * The money ran short: gives back what this process's floats of the account have not spent or
   * reserved (closing the idle ones). True when anything was given back, so a hold is worth retrying.
   */
  async release(userId: string): Promise<boolean> {
    const writes: Promise<unknown>[] = [];
    // A float closing (idle, or for another call) gives its money back when its close commits: wait for it.
    for (const [float, closing] of this.closing) if (float.userId === userId) writes.push(closing);
    for (const float of this.open) {
      if (float.userId !== userId || float.free <= 0) continue;
      if (float.calls === 0) {
        writes.push(this.close(float));
        continue;
      }
      const amount = float.free;
      float.amount -= amount;
      this.retire(float);
      writes.push(this.deps.textMoney.add({ kind: 'release', callId: float.id, movement: float.movement(amount, 'text float released') }).catch(this.logged(float, 'release')));
    }
    await Promise.all(writes);
    return writes.length > 0;
  }

  /** True while a float of this process holds money of the account that `release` could give back (or is closing). */
  holdsFor(userId: string): boolean {
    for (const float of this.open) if (float.userId === userId && float.free > 0) return true;
    for (const float of this.closing.keys()) if (float.userId === userId) return true;
    return false;
  }

  /**
   * The key's quota was set (here or by another process): its floats take no more calls and hold
   * nothing more for them, so the next call holds against the new quota. Their calls in flight still
   * spend; drain.ts says how that is charged.
   */
  drainKey(keyId: string): void {
    for (const float of this.open) {
      if (float.keyId !== keyId) continue;
      float.amount = float.spent + float.reserved;
      this.retire(float);
    }
    this.noFloatUntil.delete(keyId);
  }

  /** Closes every float: what calls spent stays charged, the rest is given back. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((float) => this.close(float)));
  }

  /** At shutdown: no more idle checks, every float closed. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.closeAll();
  }

  private fits(float: TextFloat, amount: number): boolean {
    return !float.retiring && Date.now() - float.openedAt < this.maxLifeMs && float.free >= amount;
  }

  private reserve(float: TextFloat, amount: number): TextFloat {
    float.reserved += amount;
    float.calls++;
    float.lastUsed = Date.now();
    return float;
  }

  private async openFloat(hold: HeldCall): Promise<TextFloat | undefined> {
    const room = await roomFor(this.deps.db, hold.key_id);
    const calls = this.deps.config.textFloatCalls * (this.growth.get(hold.key_id) ?? 1);
    const amount = Math.min(calls * hold.amount, Math.floor(room / HEADROOM));
    // Too little money to be worth a float: calls hold alone, which decides every 402 exactly.
    if (amount < 2 * hold.amount) return this.noFloat(hold.key_id);
    const now = Date.now();
    const float = new TextFloat(newId('flt'), hold.user_id, hold.key_id, hold.key_limited === 1, amount, now);
    const row: HeldCall = { ...hold, call_id: float.id, amount, model: '', endpoint: FLOAT_ENDPOINT, request_id: '', created_at: now };
    try {
      await this.deps.textMoney.add({ kind: 'hold', movement: float.movement(amount, 'text float'), hold: row });
    } catch (err) {
      if (err instanceof InsufficientFunds) return this.noFloat(hold.key_id);
      throw err;
    }
    this.open.add(float);
    this.current.set(hold.key_id, float);
    return float;
  }

  private noFloat(keyId: string): undefined {
    this.noFloatUntil.set(keyId, Date.now() + NO_FLOAT_MS);
    return undefined;
  }

  /** No new calls; closed once its last call settles. */
  private retire(float: TextFloat): void {
    this.stopTaking(float);
    if (float.calls === 0) void this.close(float);
  }

  private stopTaking(float: TextFloat): void {
    float.retiring = true;
    if (this.current.get(float.keyId) === float) this.current.delete(float.keyId);
  }

  private retireIdle(): void {
    const now = Date.now();
    for (const float of this.open) {
      const idle = float.calls === 0 && now - float.lastUsed >= this.deps.config.textFloatIdleMs;
      // A key that went quiet starts small again.
      if (idle) this.growth.delete(float.keyId);
      if (idle || now - float.openedAt >= this.maxLifeMs) this.retire(float);
    }
    for (const [keyId, until] of this.noFloatUntil) if (until <= now) this.noFloatUntil.delete(keyId);
  }

  private close(float: TextFloat): Promise<void> {
    if (!this.open.delete(float)) return this.closing.get(float) ?? Promise.resolve();
    this.stopTaking(float);
    const closing = this.closeNow(float).finally(() => this.closing.delete(float));
    this.closing.set(float, closing);
    return closing;
  }

  private async closeNow(float: TextFloat): Promise<void> {
    await float.spendsSettled();
    // The row knows what the calls spent; the close gives back the rest.
    await this.deps.textMoney.add({ kind: 'close', callId: float.id, movement: float.movement(0, 'text float closed') }).catch(this.logged(float, 'close'));
  }

  private logged(float: TextFloat, what: string) {
    return (err: unknown) => {
      // The sweeper got there first (this process was too slow for its age): nothing left to give.
      if (err instanceof HoldAlreadySettled) this.deps.logger.warn({ floatId: float.id }, `text float ${what}: already closed by the sweeper`);
      else this.deps.logger.error({ err, floatId: float.id }, `text float ${what} failed; the sweeper gives its rest back`);
    };
  }
}
