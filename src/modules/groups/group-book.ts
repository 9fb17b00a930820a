import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';
import { forbidden } from '../../core/errors.ts';
import { Pricing } from '../billing/pricing.ts';
import type { PricingFile } from '../billing/price-schema.ts';
import { DEFAULT_GROUP, defaultGroup, groupPastMaxima, groupTable, type Group } from './group-prices.ts';
import { asGroup, groupOfUser, listGroups } from './groups.repo.ts';

// The groups every quote and settlement prices by (ctx.groups). Each process re-reads the groups
// table once a second, so a change applies to new calls everywhere within about a second; a hold
// already taken keeps its amount. Quotes stay synchronous: a group's prices are a Pricing derived
// from the table in force, made again only when the group or that table changed.

const SYNC_MS = 1000;

export class GroupBook {
  private groups = new Map<string, Group>([[DEFAULT_GROUP, defaultGroup()]]);
  private derived = new Map<string, { base: PricingFile; group: Group; pricing: Pricing }>();
  private timer: NodeJS.Timeout | undefined;
  /** Accounts' groups as read for their tasks, each kept a second at most (a move applies within one). */
  private accounts = new Map<string, { group: Promise<string | undefined>; at: number }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly base: Pricing,
  ) {}

  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => void this.sync().catch(() => undefined), SYNC_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async sync(): Promise<void> {
    const groups = new Map<string, Group>([[DEFAULT_GROUP, defaultGroup()]]);
    for (const row of await listGroups(this.db)) groups.set(row.name, asGroup(row));
    this.groups = groups;
    this.accounts = new Map();
  }

  /**
   * What an account pays, for its tasks (which carry no key): its group read at most once a second
   * per account, so the polls of many open tasks do not each read it.
   */
  async forAccount(userId: string): Promise<Pricing> {
    const now = Date.now();
    let known = this.accounts.get(userId);
    if (!known || now - known.at >= SYNC_MS) {
      known = { group: groupOfUser(this.db, userId), at: now };
      this.accounts.set(userId, known);
      known.group.catch(() => this.accounts.delete(userId));
    }
    return this.forGroup(await known.group);
  }

  /**
   * A group whose multiplier takes a price of the table in force past the maxima: a PRICING_FILE
   * raised since the group was saved (a table set through the API was checked against the groups).
   */
  pastMaxima(): string | undefined {
    for (const group of this.groups.values()) {
      const problem = groupPastMaxima(this.base.table(), group);
      if (problem) return problem;
    }
    return undefined;
  }

  /** The group by name; an unknown one (deleted meanwhile) prices as `default`. */
  group(name: string | undefined): Group {
    return this.groups.get(name ?? DEFAULT_GROUP) ?? this.groups.get(DEFAULT_GROUP)!;
  }

  /** What `name`'s accounts pay: the same methods as the base Pricing. */
  forGroup(name: string | undefined): Pricing {
    const group = this.group(name);
    const base = this.base.table();
    const made = this.derived.get(group.name);
    if (made && made.base === base && made.group === group) return made.pricing;
    const pricing = group.multiplier === 1 && Object.keys(group.prices).length === 0 ? this.base : new Pricing(groupTable(base, group));
    this.derived.set(group.name, { base, group, pricing });
    return pricing;
  }

  allows(name: string | undefined, model: string): boolean {
    const models = this.group(name).models;
    return !models || models.has(model);
  }

  /** The prices for a call of `model` by an account of group `name`; 403 when the group may not use it, before anything is held. */
  pricingFor(name: string | undefined, model: string): Pricing {
    if (!this.allows(name, model)) throw forbidden(`Your account's group may not use the model ${model}`);
    return this.forGroup(name);
  }
}
