import type { Redis } from 'ioredis';

// Fixed one-minute windows per key. The in-process limiter serves a single process; with Redis the
// count lives in one atomic script, so every process shares one limit per key.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the current window ends. */
  resetMs: number;
}

export interface RateLimiter {
  hit(key: string, limit: number): Promise<RateDecision>;
  /** Limiters that decide in memory answer at once. */
  hitNow?(key: string, limit: number): RateDecision;
  /** Takes back one hit of the current window: for limits that count only some outcomes (failed sign-ins). */
  release(key: string): Promise<void>;
  close(): void;
}

export const WINDOW_MS = 60_000;

function decide(count: number, limit: number, resetMs: number): RateDecision {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetMs: Math.max(0, resetMs) };
}

export class MemoryRateLimiter implements RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();
  private sweeper: NodeJS.Timeout;

  constructor(private readonly windowMs = WINDOW_MS) {
    this.sweeper = setInterval(() => this.sweep(), windowMs);
    this.sweeper.unref();
  }

  async hit(key: string, limit: number): Promise<RateDecision> {
    return this.hitNow(key, limit);
  }

  hitNow(key: string, limit: number): RateDecision {
    const now = Date.now();
    const start = now - (now % this.windowMs);
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return decide(window.count, limit, start + this.windowMs - now);
  }

  async release(key: string): Promise<void> {
    const now = Date.now();
    const window = this.windows.get(key);
    if (window && window.start === now - (now % this.windowMs) && window.count > 0) window.count -= 1;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.start + this.windowMs <= now) this.windows.delete(key);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

// INCR and the expiry in one script: the first hit of a window sets its end, nothing can race it.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}
`;

// Never below zero and never a key without an expiry: a release after the window ended does nothing.
const RELEASE_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then redis.call('DECR', KEYS[1]) end
return 0
`;

/** The client once the constructor has defined its scripts: ioredis adds a method per defineCommand. */
type ScriptedRedis = Redis & {
  gwRateHit(key: string, ttlMs: number): Promise<[number, number]>;
  gwRateRelease(key: string): Promise<unknown>;
};

/**
 * Counts in Redis, shared by every process. While Redis does not answer, each process counts on its
 * own (the limits still hold per process, and nothing waits for Redis); Redis counts again as soon
 * as it answers.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly fallback: MemoryRateLimiter;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly windowMs = WINDOW_MS,
  ) {
    redis.defineCommand('gwRateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    redis.defineCommand('gwRateRelease', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    this.fallback = new MemoryRateLimiter(windowMs);
  }

  async hit(key: string, limit: number): Promise<RateDecision> {
    const now = Date.now();
    const windowKey = `${this.prefix}${key}:${Math.floor(now / this.windowMs)}`;
    const untilWindowEnd = this.windowMs - (now % this.windowMs);
    let answer: [number, number];
    try {
      answer = await (this.redis as ScriptedRedis).gwRateHit(windowKey, untilWindowEnd);
    } catch {
      return this.fallback.hitNow(key, limit);
    }
    return decide(answer[0], limit, answer[1]);
  }

  async release(key: string): Promise<void> {
    const windowKey = `${this.prefix}${key}:${Math.floor(Date.now() / this.windowMs)}`;
    await Promise.all([(this.redis as ScriptedRedis).gwRateRelease(windowKey).catch(() => undefined), this.fallback.release(key)]);
  }

  close(): void {
    this.fallback.close();
  }
}
