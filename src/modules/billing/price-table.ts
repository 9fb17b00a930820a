import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';
import { deleteMeta, getMeta, setMeta } from '../../db/meta.ts';
import { badRequest } from '../../core/errors.ts';
import { allModelIds } from '../../core/catalog/models.ts';
import { Pricing, PricingError, assertPrices, parsePricing, readPricingFile, type PricingFile } from './pricing.ts';

// Prices start from PRICING_FILE; an operator may replace them at run time (console or PUT
// /admin/prices). The replacement is stored in the database so every process, and the next start,
// uses it; each process re-reads it every few seconds. Holds already taken keep their amount: a
// task settles at most at what it held.

const META_NAME = 'pricing';
const SYNC_MS = 2000;

export class PriceTable {
  private applied: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    readonly pricing: Pricing,
    private readonly fileName: string | undefined,
  ) {}

  /** Applies the stored table, then keeps re-reading it. */
  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => void this.sync().catch(() => undefined), SYNC_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * A stored table is checked for its shape only: save() checked it in full, and one stored before
   * those checks existed keeps serving (as it did) rather than stopping the gateway at start.
   */
  async sync(): Promise<void> {
    const stored = await getMeta(this.db, META_NAME);
    if (stored === this.applied) return;
    this.pricing.replace(stored ? parsePricing(JSON.parse(stored), 'stored prices') : readPricingFile(this.fileName));
    this.applied = stored;
  }

  source(): 'file' | 'database' {
    return this.applied ? 'database' : 'file';
  }

  /**
   * Validates a whole new table (every served model must keep a price) and makes it current
   * everywhere. `vet` sees it first and may refuse it (the groups whose multiplier it would take past
   * the price maxima).
   */
  async save(value: unknown, vet: (table: PricingFile) => Promise<void> = async () => {}): Promise<PricingFile> {
    let table: PricingFile;
    try {
      table = parsePricing(value, 'prices');
      assertPrices(table, 'prices');
      new Pricing(table).assertCovers(allModelIds());
    } catch (err) {
      if (err instanceof PricingError) throw badRequest(err.message.replace('PRICING_FILE', 'prices'));
      throw err;
    }
    await vet(table);
    await setMeta(this.db, META_NAME, JSON.stringify(table));
    await this.sync();
    return table;
  }

  /** Back to PRICING_FILE, once `vet` takes its table. */
  async reset(vet: (table: PricingFile) => Promise<void> = async () => {}): Promise<PricingFile> {
    // Read once: the table vetted is the table applied, even if the file changes meanwhile.
    const table = readPricingFile(this.fileName);
    await vet(table);
    await deleteMeta(this.db, META_NAME);
    this.pricing.replace(table);
    this.applied = undefined;
    return this.pricing.table();
  }
}
