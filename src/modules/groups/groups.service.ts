import type { AppContext } from '../../context.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { allModelIds, resolveModel } from '../../core/catalog/models.ts';
import type { ModelPrice } from '../billing/price-schema.ts';
import { parsePricing, PricingError, type PricingFile } from '../billing/pricing.ts';
import { priceProblem } from '../billing/price-rules.ts';
import { getUser, setUserForKeys } from '../accounts/accounts.repo.ts';
import { DEFAULT_GROUP, groupPastMaxima, scaledProblem } from './group-prices.ts';
import { groupExists, listGroups, putGroup, type GroupRow } from './groups.repo.ts';

// The operator's side of groups: define one (create or replace by name), list them, move an account.

type Ctx = Pick<AppContext, 'db' | 'groups' | 'pricing' | 'keyCache'>;

export interface GroupInput {
  name: string;
  multiplier: number;
  models?: string[];
  prices?: Record<string, unknown>;
}

const view = (row: Omit<GroupRow, 'updated_at'> & { updated_at?: number }) => ({
  name: row.name,
  multiplier: row.multiplier,
  models: row.models,
  prices: row.prices,
});

const known = (ctx: Ctx, model: string) => ctx.pricing.has(model) || allModelIds().includes(model);

/** Each override is checked as the price table checks a model (billing/price-schema.ts); a model no table knows is a 400. */
function parsedPrices(ctx: Ctx, prices: Record<string, unknown>): Record<string, ModelPrice> {
  const out: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(prices)) {
    if (!known(ctx, model)) throw badRequest(`prices/${model}: no such model`);
    try {
      out[model] = parsePricing({ models: { [model]: price } }, 'group prices').models[model]!;
    } catch (err) {
      if (err instanceof PricingError) throw badRequest(err.message);
      throw err;
    }
  }
  return out;
}

/**
 * What the group's accounts would pay, model by model, checked as a price table is
 * (billing/price-rules.ts): an override replaces the model's whole price, so it alone must cover
 * every tier; any other model costs its base price times the multiplier, which must stay under the
 * same maxima. A base price that is itself refused is the table's problem, not the group's.
 */
function checkedPrices(ctx: Ctx, prices: Record<string, unknown>, multiplier: number): Record<string, ModelPrice> {
  const overrides = parsedPrices(ctx, prices);
  for (const [model, price] of Object.entries(overrides)) {
    const problem = priceProblem(`prices/${model}`, model, price);
    if (problem) throw badRequest(problem);
  }
  const problem = scaledProblem(ctx.pricing.table(), overrides, multiplier);
  if (problem) throw badRequest(`multiplier: ${multiplier} times the base prices: ${problem}`);
  return overrides;
}

/**
 * A new base price table, refused when a group's multiplier would take one of its prices past the
 * maxima (as that group's own save would have been): the groups are checked against the table
 * they will scale, not only the one in force when they were saved.
 */
export async function checkGroupsAgainst(ctx: Ctx, table: PricingFile): Promise<void> {
  for (const group of await listGroups(ctx.db)) {
    const problem = groupPastMaxima(table, group);
    if (problem) throw badRequest(problem);
  }
}

export async function saveGroup(ctx: Ctx, input: GroupInput) {
  if (input.name === DEFAULT_GROUP) throw badRequest('name: the default group is the price table as it is and cannot be changed');
  // Aliases as a key's list takes them: stored as the ids the calls are checked by.
  const models = [...new Set((input.models ?? []).map((m) => resolveModel(m)?.id ?? m))];
  const unknownModel = models.find((m) => !known(ctx, m));
  if (unknownModel) throw badRequest(`models: no such model ${unknownModel}`);
  const row = { name: input.name, multiplier: input.multiplier, models, prices: checkedPrices(ctx, input.prices ?? {}, input.multiplier) };
  await putGroup(ctx.db, row);
  await ctx.groups.sync();
  return view(row);
}

export async function findGroups(ctx: Ctx) {
  return (await listGroups(ctx.db)).map(view);
}

/** 400 naming `group` when there is no such group. */
export async function assertGroup(ctx: Ctx, group: string): Promise<void> {
  if (!(await groupExists(ctx.db, group))) throw badRequest(`group: no group ${group}`);
}

/** Moves an account to `group`; its keys are dropped from every key cache, so new calls pay the new prices within a second. */
export async function moveUser(ctx: Ctx, userId: string, group: string): Promise<void> {
  if (!(await getUser(ctx.db, userId))) throw notFound(`No user ${userId}`);
  await assertGroup(ctx, group);
  const hashes = await setUserForKeys(ctx.db, userId, { group_name: group });
  for (const hash of hashes) await ctx.keyCache.announce(hash);
}
