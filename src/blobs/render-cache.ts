import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { extensionOf, type RenderSpec, type SignedFile } from './signed-urls.ts';
import { renderImage, renderLastFrame, renderVideo } from '../providers/simulator/media.ts';

// Rendered files are kept on local disk so a link downloaded twice renders once. The cache is only
// a cache: a process without the file renders it again from the signed parameters. Entries are named
// after their expiry so the sweeper can delete expired ones without reading them.

export const CONTENT_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', mp4: 'video/mp4' };

export class RenderCache {
  private pending = new Map<string, Promise<string>>();

  constructor(private readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  private pathFor(name: string, file: SignedFile): string {
    const digest = createHash('sha256').update(name).digest('hex').slice(0, 32);
    return path.join(this.dir, `${file.expiresAt}-${digest}.${extensionOf(file.spec)}`);
  }

  /** The path of the rendered file, rendering it first if needed (once, however many ask at once). */
  async get(name: string, file: SignedFile): Promise<string> {
    const target = this.pathFor(name, file);
    if (fs.existsSync(target)) return target;
    let work = this.pending.get(target);
    if (!work) {
      work = this.renderTo(target, file.spec).finally(() => this.pending.delete(target));
      this.pending.set(target, work);
    }
    return work;
  }

  private async renderTo(target: string, spec: RenderSpec): Promise<string> {
    const bytes = await render(spec);
    const temp = `${target}.${process.pid}.tmp`;
    await fs.promises.writeFile(temp, bytes);
    await fs.promises.rename(temp, target);
    return target;
  }

  /** Deletes files whose links have expired. */
  async sweep(nowSeconds = Math.floor(Date.now() / 1000)): Promise<number> {
    let removed = 0;
    for (const entry of await fs.promises.readdir(this.dir)) {
      const expiresAt = Number(entry.split('-')[0]);
      if (Number.isFinite(expiresAt) && expiresAt < nowSeconds) {
        await fs.promises.rm(path.join(this.dir, entry), { force: true });
        removed++;
      }
    }
    return removed;
  }
}

async function render(spec: RenderSpec): Promise<Buffer> {
  switch (spec.k) {
    case 'image':
      return renderImage({ width: spec.w, height: spec.h, format: spec.f, compression: spec.q, seed: spec.s, transparent: spec.t });
    case 'video':
      return renderVideo({ width: spec.w, height: spec.h, durationSeconds: spec.d, seed: spec.s, withAudio: spec.a });
    case 'frame':
      return renderLastFrame({ width: spec.w, height: spec.h, durationSeconds: spec.d, seed: spec.s });
  }
}
