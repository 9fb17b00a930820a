import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

// Real media for the simulator: images of the exact size and format, and playable H.264 MP4 videos,
// deterministic for a given seed. Images come from a tiny seeded gradient scaled up by libvips
// (fast even at 4K); videos from ffmpeg's synthetic sources at a low frame rate.

const ffmpegPath: string = createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg').path;
const FFMPEG_TIMEOUT_MS = 120_000;

function palette(seed: string): [number, number, number][] {
  const digest = createHash('sha256').update(seed).digest();
  return [0, 3, 6, 9].map((i) => [digest[i]!, digest[i + 1]!, digest[i + 2]!]);
}

export interface ImageSpec {
  width: number;
  height: number;
  format: 'png' | 'jpeg' | 'webp';
  /** 0-100 for jpeg/webp: 100 = least compression (best quality). */
  compression?: number;
  seed: string;
  transparent?: boolean;
}

export async function renderImage(spec: ImageSpec): Promise<Buffer> {
  // A 4x4 grid of seeded colours; bilinear scaling turns it into a smooth gradient.
  const colours = palette(spec.seed);
  const raw = Buffer.alloc(4 * 4 * 3);
  for (let i = 0; i < 16; i++) {
    const [a, b] = [colours[i % 4]!, colours[(i >> 2) % 4]!];
    raw.set([(a[0] + b[0]) >> 1, (a[1] + b[1]) >> 1, (a[2] + b[2]) >> 1], i * 3);
  }
  // Loaded on the first image: a gateway that serves only text (and every CLI command) starts without it.
  const { default: sharp } = await import('sharp');
  let image = sharp(raw, { raw: { width: 4, height: 4, channels: 3 } }).resize(spec.width, spec.height, {
    fit: 'fill',
    kernel: 'linear',
  });
  if (spec.transparent) image = image.ensureAlpha(0.5);
  const quality = spec.compression === undefined ? 85 : Math.max(1, Math.min(100, spec.compression));
  if (spec.format === 'jpeg') return image.jpeg({ quality }).toBuffer();
  if (spec.format === 'webp') return image.webp({ quality }).toBuffer();
  return image.png({ compressionLevel: 6 }).toBuffer();
}

export interface VideoSpec {
  width: number;
  height: number;
  durationSeconds: number;
  seed: string;
  withAudio?: boolean;
}

function run(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-y', ...args], { timeout: FFMPEG_TIMEOUT_MS }, (err, _out, stderr) =>
      err ? reject(new Error(`ffmpeg failed: ${stderr || err.message}`)) : resolve(),
    );
  });
}

const hex = ([r, g, b]: [number, number, number]) => `0x${[r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('')}`;

const FRAME_RATE = 8;

function syntheticSource(spec: VideoSpec): string {
  const [background, box] = palette(spec.seed);
  return (
    `color=c=${hex(background!)}:s=${spec.width}x${spec.height}:r=${FRAME_RATE}:d=${spec.durationSeconds},` +
    `drawbox=x='mod(t*iw/4,iw)':y=ih/3:w=iw/8:h=ih/8:color=${hex(box!)}:t=fill`
  );
}

async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `gw-video-${randomBytes(3).toString('hex')}-`));
  try {
    return await work(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export function renderVideo(spec: VideoSpec): Promise<Buffer> {
  return withTempDir(async (dir) => {
    const videoFile = path.join(dir, 'video.mp4');
    const audio = spec.withAudio ? ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${spec.durationSeconds}`, '-c:a', 'aac', '-shortest'] : [];
    await run(['-f', 'lavfi', '-i', syntheticSource(spec), ...audio, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', videoFile]);
    return fs.readFile(videoFile);
  });
}

/**
 * The video's last frame as a PNG, drawn straight from the synthetic source at the last frame's
 * time: no H.264 encode of the whole clip just to decode its end again.
 */
export function renderLastFrame(spec: VideoSpec): Promise<Buffer> {
  return withTempDir(async (dir) => {
    const frameFile = path.join(dir, 'last.png');
    const lastFrameTime = Math.max(0, spec.durationSeconds - 1 / FRAME_RATE);
    await run(['-ss', lastFrameTime.toFixed(3), '-f', 'lavfi', '-i', syntheticSource(spec), '-frames:v', '1', '-update', '1', frameFile]);
    return fs.readFile(frameFile);
  });
}
