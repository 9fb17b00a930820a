import type { BlobInfo, BlobStore } from './blob-store.ts';
import { contentTypeOf } from '../lib/content-types.ts';
import { extensionOf, type RenderSpec } from './signed-urls.ts';

// Simulated files are rendered on their first download and stored like every other result file;
// after that any process serves them from the store. A process renders a key once however many ask
// at once; two processes may both render one (the same bytes, so the second write changes nothing).

export class RenderCache {
  private pending = new Map<string, Promise<BlobInfo>>();

  /** `render` makes a simulated file's bytes (the simulator's media). */
  constructor(
    private readonly store: BlobStore,
    private readonly render: (spec: RenderSpec) => Promise<Buffer>,
  ) {}

  /** The stored file under `key`, rendered from `spec` first when the store has none. */
  async ensure(key: string, spec: RenderSpec): Promise<BlobInfo> {
    const stored = await this.store.head(key);
    if (stored) return stored;
    let work = this.pending.get(key);
    if (!work) {
      work = this.render(spec)
        .then((bytes) => this.store.put(key, bytes, { contentType: contentTypeOf(extensionOf(spec)) }))
        .finally(() => this.pending.delete(key));
      this.pending.set(key, work);
    }
    return work;
  }
}
