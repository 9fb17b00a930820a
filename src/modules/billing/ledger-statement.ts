import { COUNTS_AGAINST_QUOTA_SQL, REFUSABLE_SQL, TAKEN_SQL } from './ledger-plan.ts';

// Postgres: the ledger movements of a whole batch as data-modifying CTEs, for statements that write
// a batch at once outside BEGIN/COMMIT (tasks/submit-statement.ts, text-money/whole.ts).
//
// `source` names a CTE with columns (kind, user_id, key_id, key_limited, amount, ref, note), kind
// being 'hold' or 'charge' (debits) or 'refund', holding only the movements that move (`where
// ${MOVES_SQL}`: a refund of 0 does nothing on any path; the callers' sources filter it out or carry
// no refunds, so the statement does not pay for a pass of its own). What each movement takes and
// from which payers are ledger-plan.ts's rules, in SQL. Each account and key changes once by its net
// sum, rows locked in the careful path's order (accounts by id, then keys by id, as ledger-batch.ts),
// so the two paths cannot deadlock each other. What makes the debits conditional is each UPDATE's
// condition (a payer with a debit other than an overrun must be left at zero or more by everything
// but its overruns): a payer short is not updated, the final assertion fails the whole statement and
// nothing of it is kept. `now` is the SQL text of the timestamp parameter. The statement
// must end by selecting `ledgerRowsAllFound(source)`, which fails it when an account or key row is
// missing.

export function ledgerMovementCtes(source: string, now: string): string {
  return `
accounts_locked as materialized (
  select u.id, t.net, t.checked from users u
  join (
    select user_id, sum(${TAKEN_SQL})::bigint as net,
      case when bool_or(${REFUSABLE_SQL}) then sum(case when kind = 'overrun' then 0 else ${TAKEN_SQL} end)::bigint end as checked
    from ${source} group by user_id
  ) t on t.user_id = u.id
  order by u.id for no key update of u
),
accounts as (
  update users u set balance = u.balance - l.net, used = u.used + l.net, updated_at = ${now}
  from accounts_locked l where u.id = l.id and (l.checked is null or u.balance - l.checked >= 0)
  returning u.id
),
keys_locked as materialized (
  select k.id, t.net, t.limited_net, t.limited_checked from api_keys k
  join (
    select key_id, sum(${TAKEN_SQL})::bigint as net, sum(case when ${COUNTS_AGAINST_QUOTA_SQL} then ${TAKEN_SQL} else 0 end)::bigint as limited_net,
      case when bool_or(${COUNTS_AGAINST_QUOTA_SQL} and ${REFUSABLE_SQL})
        then sum(case when ${COUNTS_AGAINST_QUOTA_SQL} and kind <> 'overrun' then ${TAKEN_SQL} else 0 end)::bigint end as limited_checked
    from ${source} where key_id is not null group by key_id
  ) t on t.key_id = k.id
  -- Reading every account's UPDATE here, before any key is locked, keeps the lock order.
  where gateway_assert((select count(*) from accounts) = (select count(distinct user_id) from ${source}), 'ledger statement: an account row is missing or short')
  order by k.id for no key update of k
),
keys as (
  update api_keys k set quota_used = k.quota_used + l.net, quota_remain = k.quota_remain - l.limited_net
  from keys_locked l where k.id = l.id and (l.limited_checked is null or k.quota_remain - l.limited_checked >= 0)
  returning k.id
),
ledger_in as (
  insert into ledger (user_id, key_id, kind, balance_delta, used_delta, key_remain_delta, key_used_delta, ref, note, created_at)
  select user_id, key_id, kind, -(${TAKEN_SQL}), ${TAKEN_SQL},
    case when ${COUNTS_AGAINST_QUOTA_SQL} then -(${TAKEN_SQL}) else 0 end,
    case when key_id is not null then ${TAKEN_SQL} else 0 end,
    ref, note, ${now}
  from ${source}
)`;
}

export function ledgerRowsAllFound(source: string): string {
  return `gateway_assert(
  (select count(*) from accounts) = (select count(distinct user_id) from ${source})
    and (select count(*) from keys) = (select count(distinct key_id) from ${source}),
  'ledger statement: an account or key row is missing or short'
)`;
}
