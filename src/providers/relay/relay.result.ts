import type { Produced, ProducedResult } from '../../core/task-provider.ts';

// What of the upstream gateway's task record reaches our caller. The upstream is ours to know, not
// the caller's: its host, its links (signed, private) and whatever else it put in its record stay
// here. A completed result keeps only our own file groups, every link turned into a part that the
// engine downloads into our store; a failure keeps a known error code and a message that names no
// address.

/** One file group of the upstream's result, every field possibly missing or of another type. */
type FileGroup = { url?: unknown; duration?: unknown; resolution?: unknown; last_frame_url?: unknown } | null | undefined;

type Video = NonNullable<ProducedResult['videos']>[number];

const part = (url: unknown): Produced => ({ url: String(url) });
const links = (group: FileGroup): Produced[] => (Array.isArray(group?.url) ? group.url.map(part) : []);
const groups = (value: unknown): FileGroup[] | undefined => (Array.isArray(value) ? value : undefined);

/**
 * The upstream's result as our own file groups only, each of its links a part to download and store.
 * A video group without a readable duration or resolution takes the task's own (`asked`).
 */
export function rehosted(result: Record<string, unknown>, asked: { duration?: number; resolution?: string }): ProducedResult {
  const out: ProducedResult = {};
  const images = groups(result.images);
  const audios = groups(result.audios);
  const videos = groups(result.videos);
  if (images) out.images = images.map((g) => ({ url: links(g) }));
  if (audios) out.audios = audios.map((g) => ({ url: links(g) }));
  if (videos) {
    out.videos = videos.map((g): Video => {
      const video: Video = {
        url: links(g),
        // Its duration and resolution as our task record has them (an integer, a tier such as 720p), or none.
        duration: Number.isInteger(g?.duration) ? (g!.duration as number) : (asked.duration ?? 0),
        resolution: typeof g?.resolution === 'string' && /^[0-9A-Za-z]{1,12}$/.test(g.resolution) ? g.resolution : (asked.resolution ?? ''),
      };
      if (g?.last_frame_url) video.last_frame_url = part(g.last_frame_url);
      return video;
    });
  }
  return out;
}

/** The error codes a failed task of ours shows; any other code of the upstream's reads as upstream_error. */
const CODES = new Set(['content_policy_violation', 'timeout', 'upstream_error', 'task_failed']);

const NEUTRAL: Record<string, string> = {
  content_policy_violation: "The upstream's safety system refused the task",
  timeout: 'The upstream did not finish the task in time',
};

// A link of any scheme, a host name (labels and a top-level name of letters), an IPv4 or IPv6 address.
const ADDRESS = /[a-z][a-z0-9+.-]*:\/\/|\b(?:[a-z0-9-]+\.)+[a-z]{2,}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|\[[0-9a-f:]+\]|\b[0-9a-f]{1,4}(?::[0-9a-f]{0,4}){2,}/i;

/** The upstream's message when it names no address and is short; otherwise undefined. */
export function addressFree(message: unknown, host: string): string | undefined {
  if (typeof message !== 'string' || message.length === 0 || message.length > 500) return undefined;
  if (ADDRESS.test(message) || (host && message.toLowerCase().includes(host.toLowerCase()))) return undefined;
  return message;
}

/** A failed upstream task as our caller sees it: a code of ours and a message naming nothing of the upstream's. */
export function neutralFailure(error: { code?: unknown; message?: unknown } | undefined, host: string): { code: string; message: string } {
  const code = typeof error?.code === 'string' && CODES.has(error.code) ? error.code : 'upstream_error';
  const message = addressFree(error?.message, host) ?? NEUTRAL[code] ?? 'The upstream task failed';
  return { code, message };
}
