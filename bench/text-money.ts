import { createHash } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { createKey, createUser } from '../src/modules/accounts/accounts.service.ts';
import { costOf, holdFor } from '../src/modules/text/call-price.ts';
import type { TextCall } from '../src/modules/text/text-call.ts';
import { tempSqlite } from './lib.ts';

// In-process cost of a text call's money on SQLite, without HTTP: the hold (from the key's float)
// and the settlement (a spend and a usage row, group-committed), per call, in rounds of
// BENCH_CALLS (20,000) that end when everything has committed. No network, so this VM's drift
// shows less than in the HTTP benches; compare rounds of one run.
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const ctx = await createContext(loadConfig({ ...process.env, DATABASE_URL: tempSqlite(), LOG_LEVEL: 'warn' }));
const user = await createUser(ctx, { name: 'bench', balance: 1_000_000 });
const made = await createKey(ctx, { user_id: user.id, unlimited: true });
const key = (await ctx.keyCache.lookup(createHash('sha256').update(made.key).digest('hex')))!;
const call: TextCall = {
  key,
  endpoint: 'messages',
  requestId: 'bench',
  request: { model: 'chatgen-4-haiku', messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hello' }] }], maxTokens: 64 },
  allDown: () => {
    throw new Error('not called');
  },
};

async function round(settle: boolean): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    const money = await holdFor(ctx, call, 12);
    const usage = { input: 12, cache_read: 0, cache_write: 0, output: 8 };
    if (settle) ctx.textMoney.settle(money, costOf(ctx, call, usage), usage, 'ok');
    // Let timers run now and then, as they would between requests.
    if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
  }
  await ctx.textMoney.flush();
  return Number(process.hrtime.bigint() - start) / CALLS / 1000;
}

for (let r = 1; r <= 6; r++) console.log(`round ${r}: hold ${(await round(false)).toFixed(2)} µs per call; hold and settlement ${(await round(true)).toFixed(2)} µs per call`);
await ctx.close();
process.exit(0);
