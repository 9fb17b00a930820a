import type { Dispatcher } from 'undici';
import type { BlobInfo, BlobStore } from '../../blobs/blob-store.ts';
import type { MediaKind } from '../../lib/content-types.ts';
import type { FileSigner } from '../../blobs/signed-urls.ts';
import { DownloadFailed, storeBytes, storeDownload, storeStream, type StoreTarget } from '../../blobs/stored-parts.ts';
import type { Task } from '../../db/types.ts';
import type { Produced, ProducedResult, TaskResult } from '../../core/task-provider.ts';
import { resultTtlSeconds } from '../../core/catalog/models.ts';

// The results step: every file part of a result is stored, and our signed link over its stored key
// takes its place, before the task completes. A link's lifetime is the model's.

export interface ResultDeps {
  store: BlobStore;
  signer: FileSigner;
  resultTtlSeconds: number;
  maxBytes: number;
  timeoutMs: number;
  retryDelaysMs: number[];
  /** Connects only to addresses that pass the callback rules: for URLs a caller gave. */
  callerDispatcher?: Dispatcher;
}

export { DownloadFailed };

const hasParts = (result: ProducedResult) => Boolean(result.images || result.videos || result.audios);

/** The result with every part stored and replaced by its link; DownloadFailed when a file cannot be fetched. */
export async function storeResult(deps: ResultDeps, task: Task, result: ProducedResult): Promise<TaskResult> {
  if (!hasParts(result)) return result as TaskResult;
  const expiresAt = Math.floor(Date.now() / 1000) + (resultTtlSeconds(task.model) ?? deps.resultTtlSeconds);
  let index = 0;
  // Each file is checked to be the kind of media its group holds (a video's last frame is an image).
  const link = async (part: Produced, kind: MediaKind): Promise<string> => {
    if (typeof part === 'string') return part;
    if ('render' in part) return deps.signer.url({ spec: part.render, expiresAt });
    const target: StoreTarget = { store: deps.store, expiresAt, name: `${task.id}-${index++}`, maxBytes: deps.maxBytes, kind };
    return deps.signer.url({ key: (await storePart(deps, target, part)).key, expiresAt });
  };
  const links = (parts: Produced[], kind: MediaKind) => sequential(parts, (part) => link(part, kind));
  const out: TaskResult = { ...result } as TaskResult;
  if (result.images) out.images = await sequential(result.images, async (g) => ({ ...g, url: await links(g.url, 'image'), expires_at: expiresAt }));
  if (result.audios) out.audios = await sequential(result.audios, async (g) => ({ ...g, url: await links(g.url, 'audio'), expires_at: expiresAt }));
  if (result.videos) {
    out.videos = await sequential(result.videos, async (g) => {
      const video = { ...g, url: await links(g.url, 'video'), expires_at: expiresAt } as NonNullable<TaskResult['videos']>[number];
      if (g.last_frame_url !== undefined) video.last_frame_url = await link(g.last_frame_url, 'image');
      return video;
    });
  }
  return out;
}

async function storePart(deps: ResultDeps, target: StoreTarget, part: Exclude<Produced, string | { render: unknown }>): Promise<BlobInfo> {
  if ('bytes' in part) return storeBytes(target, part.bytes);
  if ('stream' in part) return storeStream(target, await part.stream());
  // Upstream-returned URLs are trusted as their channel is; a caller's URL passes the address rules.
  const dispatcher = part.callerGiven ? deps.callerDispatcher : undefined;
  return storeDownload(target, part.url, { timeoutMs: deps.timeoutMs, retryDelaysMs: deps.retryDelaysMs, dispatcher });
}

// One file at a time: a task's files are few, and one stream at a time bounds the memory used.
async function sequential<T, R>(items: T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) out.push(await run(item));
  return out;
}
