import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';
import type { Channel } from '../../core/channel.ts';
import { typeServes } from './channel-options.ts';
import { listChannels } from './channels.repo.ts';

// Channels live in the database so every process routes the same way; each process re-reads them
// at most once a second, so an operator's change reaches all of them within that time.
const CACHE_MS = 1000;

export class ChannelRouter {
  private cached?: { at: number; channels: Channel[] };
  /** Per model, its serving channels grouped by priority (best first), for the current `cached` list. */
  private grouped?: { channels: Channel[]; byModel: Map<string, Channel[][]> };
  /** Per model, the candidates when no priority group has a choice to shuffle (the usual case). */
  private fixed = new Map<string, readonly Channel[]>();

  constructor(private readonly db: Kysely<Database>) {}

  async all(): Promise<Channel[]> {
    const fresh = this.fresh();
    if (fresh) return fresh;
    const channels = await listChannels(this.db);
    this.cached = { at: Date.now(), channels };
    return channels;
  }

  private fresh(): Channel[] | undefined {
    return this.cached && Date.now() - this.cached.at < CACHE_MS ? this.cached.channels : undefined;
  }

  invalidate(): void {
    this.cached = undefined;
  }

  /**
   * Enabled channels serving `model`, best first: highest priority, then weighted random order.
   * At once from the cached rows (every call but one a second): no promise on a text call's path.
   */
  candidates(model: string): readonly Channel[] | Promise<readonly Channel[]> {
    const fresh = this.fresh();
    return fresh ? this.ordered(fresh, model) : this.all().then((channels) => this.ordered(channels, model));
  }

  private ordered(channels: Channel[], model: string): readonly Channel[] {
    if (this.grouped?.channels !== channels) {
      this.grouped = { channels, byModel: new Map() };
      this.fixed = new Map();
    }
    const fixed = this.fixed.get(model);
    if (fixed) return fixed;
    let groups = this.grouped.byModel.get(model);
    if (!groups) {
      // A type that cannot do the model's kind of work is passed over (a `*` channel, or one stored before its type stopped serving it).
      groups = priorityGroups(channels.filter((c) => c.status === 'enabled' && servesModel(c, model) && typeServes(c.type, model)));
      this.grouped.byModel.set(model, groups);
      // One channel per priority: the order never changes, so one list serves every call.
      if (groups.every((group) => group.length === 1)) {
        const order = groups.map((group) => group[0]!);
        this.fixed.set(model, order);
        return order;
      }
    }
    const out: Channel[] = [];
    for (const group of groups) out.push(...weightedShuffle(group));
    return out;
  }

  async pick(model: string): Promise<Channel | undefined> {
    return (await this.candidates(model))[0];
  }
}

export function servesModel(channel: Channel, model: string): boolean {
  return channel.models.has(model) || channel.models.has('*');
}

function priorityGroups(serving: Channel[]): Channel[][] {
  const byPriority = new Map<number, Channel[]>();
  for (const channel of serving) byPriority.set(channel.priority, [...(byPriority.get(channel.priority) ?? []), channel]);
  return [...byPriority.keys()].sort((a, b) => b - a).map((p) => byPriority.get(p)!);
}

function weightedShuffle(channels: Channel[]): Channel[] {
  if (channels.length === 1) return [channels[0]!];
  const pool = [...channels];
  const out: Channel[] = [];
  while (pool.length > 0) {
    const total = pool.reduce((sum, c) => sum + Math.max(1, c.weight), 0);
    let ticket = Math.random() * total;
    const index = pool.findIndex((c) => (ticket -= Math.max(1, c.weight)) < 0);
    out.push(...pool.splice(index === -1 ? pool.length - 1 : index, 1));
  }
  return out;
}
