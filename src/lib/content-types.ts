// The content type of a stored file comes from its first bytes, never from what an upstream said.

export const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  bin: 'application/octet-stream',
};

/** How many leading bytes `sniffExtension` needs. */
export const SNIFF_BYTES = 12;

const starts = (b: Buffer, bytes: number[], at = 0) => bytes.every((v, i) => b[at + i] === v);
const ascii = (b: Buffer, text: string, at: number) => b.subarray(at, at + text.length).toString('latin1') === text;

export function sniffExtension(head: Buffer): string {
  if (starts(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (starts(head, [0xff, 0xd8, 0xff])) return 'jpg';
  if (ascii(head, 'RIFF', 0) && ascii(head, 'WEBP', 8)) return 'webp';
  if (ascii(head, 'RIFF', 0) && ascii(head, 'WAVE', 8)) return 'wav';
  if (ascii(head, 'GIF87a', 0) || ascii(head, 'GIF89a', 0)) return 'gif';
  if (ascii(head, 'ftyp', 4)) return ascii(head, 'qt  ', 8) ? 'mov' : ascii(head, 'M4A ', 8) ? 'm4a' : 'mp4';
  if (ascii(head, 'OggS', 0)) return 'ogg';
  if (ascii(head, 'fLaC', 0)) return 'flac';
  if (starts(head, [0x1a, 0x45, 0xdf, 0xa3])) return 'webm';
  if (ascii(head, 'ID3', 0) || (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0)) return 'mp3';
  return 'bin';
}

export function contentTypeOf(extension: string): string {
  return CONTENT_TYPES[extension] ?? 'application/octet-stream';
}

/** What a result file stands as: the group it is in (images, videos, audios), or what a header says. */
export type MediaKind = 'image' | 'video' | 'audio';

const KINDS: Record<string, MediaKind> = { png: 'image', jpg: 'image', webp: 'image', gif: 'image', mp4: 'video', mov: 'video', webm: 'video', mp3: 'audio', wav: 'audio', m4a: 'audio', ogg: 'audio', flac: 'audio' };

/** Whether bytes sniffed as `extension` are a `kind` (sound also comes in the MP4 and WebM containers). */
export function isKind(extension: string, kind: MediaKind): boolean {
  if (kind === 'audio' && (extension === 'mp4' || extension === 'webm')) return true;
  return KINDS[extension] === kind;
}

/** The kind a Content-Type header names, when it names one of ours. */
export function claimedKind(contentType: string | undefined): MediaKind | undefined {
  const top = /^\s*(image|video|audio)\//i.exec(contentType ?? '')?.[1];
  return top ? (top.toLowerCase() as MediaKind) : undefined;
}
