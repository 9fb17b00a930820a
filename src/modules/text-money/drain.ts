import type { Transaction } from 'kysely';
import type { Database } from '../../db/types.ts';
import { refund } from '../billing/ledger.ts';
import { FLOAT_ENDPOINT } from './floats.ts';

// An operator who sets a key's quota means what the key may spend from then on. A float (floats.ts)
// holds money the key's next calls spend without asking the database, so the quota would only bind
// once every process's float of the key ran out. Draining makes each float's row hold exactly what
// its calls have spent and gives the rest back to the key and its account, in the transaction that
// sets the quota; a spend committed later goes past the row's amount and is charged as an overrun
// when the float closes, like any call that cost more than it held.

/**
 * Gives back, in `trx`, what the open floats of a key hold and have not spent. Call it first in the
 * transaction: its first statement is a write, which on SQLite takes the write lock before anything
 * is read, and like a float's close it locks the float's row before the account's and the key's
 * (through the ledger), one order everywhere, so Postgres does not deadlock.
 */
export async function drainKeyFloats(trx: Transaction<Database>, keyId: string): Promise<void> {
  // The no-op update locks the rows as it reads them, so no spend lands in between.
  const floats = await trx
    .updateTable('text_holds')
    .set((eb) => ({ spent: eb.ref('spent') }))
    .where('key_id', '=', keyId)
    .where('endpoint', '=', FLOAT_ENDPOINT)
    .returning(['call_id', 'user_id', 'key_limited', 'amount', 'spent'])
    .execute();
  for (const float of floats) {
    const unspent = Number(float.amount) - Number(float.spent);
    if (unspent <= 0) continue;
    await trx.updateTable('text_holds').set({ amount: Number(float.spent) }).where('call_id', '=', float.call_id).execute();
    await refund(trx, { userId: float.user_id, keyId, keyLimited: float.key_limited === 1, amount: unspent, ref: float.call_id, note: 'text float given back: key quota set' });
  }
}
