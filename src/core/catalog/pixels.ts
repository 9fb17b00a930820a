// Pixel sizes for ratio x resolution. 1:1 is fixed (1024, 2048, 2880 at 1k/2k/4k); every other size
// follows one rule: the long side is the tier's base, then both sides shrink until the image holds
// no more pixels than the tier's 1:1 image, and both are rounded to a multiple of 16 (down, where
// rounding to the nearest would cross the tier's pixel budget again, as 4:3 at 4k would).
// That keeps 16:9 at 4k at exactly 3840x2160 (= 2880^2 pixels) and 1:1 at 4k at 2880x2880.

const IMAGE_TIERS: Record<string, { base: number; square: number }> = {
  '0.5k': { base: 512, square: 512 },
  '1k': { base: 1024, square: 1024 },
  '2k': { base: 2048, square: 2048 },
  '3k': { base: 3072, square: 3072 },
  '4k': { base: 3840, square: 2880 },
};

/**
 * The tier a <w>x<h> image is billed at: the smallest of `tiers` whose 1:1 image holds at least its
 * pixels (the same budget the ratio sizes are shrunk to). Undefined when it is larger than them all.
 */
export function imageTierOf(pixels: number, tiers: readonly string[]): string | undefined {
  const budget = (tier: string) => IMAGE_TIERS[tier]!.square ** 2;
  return [...tiers].filter((tier) => IMAGE_TIERS[tier]).sort((a, b) => budget(a) - budget(b)).find((tier) => pixels <= budget(tier));
}

const round16 = (value: number) => Math.max(16, Math.round(value / 16) * 16);
const floor16 = (value: number) => Math.max(16, Math.floor(value / 16) * 16);
const roundEven = (value: number) => Math.max(2, Math.round(value / 2) * 2);

export function parseRatio(ratio: string): [number, number] {
  const [w, h] = ratio.split(':').map(Number);
  return [w!, h!];
}

export function imagePixelSize(ratio: string, resolution: string): { width: number; height: number } {
  const tier = IMAGE_TIERS[resolution.toLowerCase()];
  if (!tier) throw new Error(`unknown image resolution ${resolution}`);
  const [rw, rh] = parseRatio(ratio);
  let width = rw >= rh ? tier.base : (tier.base * rw) / rh;
  let height = rw >= rh ? (tier.base * rh) / rw : tier.base;
  const scale = Math.min(1, Math.sqrt((tier.square * tier.square) / (width * height)));
  width *= scale;
  height *= scale;
  const nearest = { width: round16(width), height: round16(height) };
  if (nearest.width * nearest.height <= tier.square * tier.square) return nearest;
  return { width: floor16(width), height: floor16(height) };
}

const VIDEO_SHORT_SIDE: Record<string, number> = { '480p': 480, '720p': 720, '1080p': 1080, '4k': 2160 };

/** Video frames: the short side is the resolution's line count; sides are even (H.264 needs it). */
export function videoPixelSize(ratio: string, resolution: string): { width: number; height: number } {
  const short = VIDEO_SHORT_SIDE[resolution.toLowerCase()];
  if (!short) throw new Error(`unknown video resolution ${resolution}`);
  const [rw, rh] = parseRatio(ratio === 'adaptive' ? '16:9' : ratio);
  return rw >= rh ? { width: roundEven((short * rw) / rh), height: short } : { width: short, height: roundEven((short * rh) / rw) };
}

/** The whole table, for the README and the docs. */
export function pixelTable(ratios: string[], resolutions: string[], size = imagePixelSize): Record<string, Record<string, string>> {
  return Object.fromEntries(
    ratios.map((ratio) => [ratio, Object.fromEntries(resolutions.map((r) => {
      const { width, height } = size(ratio, r);
      return [r, `${width}x${height}`];
    }))]),
  );
}
