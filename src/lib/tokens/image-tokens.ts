// What an image in a prompt costs in tokens, as the vendors count it: by its size, not a flat rate.
// The messages API counts width x height / 750 after scaling the image to at most ~1.2 megapixels
// (and 1568 pixels a side), ~1,600 tokens for a large image; the Gemini API 258 tokens a 768-pixel
// tile. The hold takes the larger of the two; an image whose size cannot be read counts as the
// largest the messages API bills. The settlement is what the upstream reports in any case.

const MAX_PIXELS = 1_200_000;
const MAX_SIDE = 1568;
const PIXELS_PER_TOKEN = 750;
const TILE = 768;
const TILE_TOKENS = 258;
const UNKNOWN = Math.ceil(MAX_PIXELS / PIXELS_PER_TOKEN);

/** An image's width and height from its first bytes (PNG, GIF, WebP, JPEG), if they can be read. */
export function imageSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47) return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  if (bytes.length >= 10 && bytes.toString('latin1', 0, 3) === 'GIF') return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  if (bytes.length >= 30 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') {
    const kind = bytes.toString('latin1', 12, 16);
    if (kind === 'VP8X') return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
    if (kind === 'VP8 ') return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
    if (kind === 'VP8L') {
      const bits = bytes.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
    for (let at = 2; at + 9 < bytes.length; ) {
      if (bytes[at] !== 0xff) return undefined;
      const marker = bytes[at + 1]!;
      const length = bytes.readUInt16BE(at + 2);
      // Start-of-frame markers (C0-CF but DHT C4, JPG C8, DAC CC) carry the size.
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { width: bytes.readUInt16BE(at + 7), height: bytes.readUInt16BE(at + 5) };
      at += 2 + length;
    }
  }
  return undefined;
}

/** The most tokens a vendor bills for the image (base64 `data`). */
export function imageTokens(data: string): number {
  // The header is in the first bytes, but a JPEG's frame may follow large metadata: read up to 64 KiB.
  const size = imageSize(Buffer.from(data.slice(0, 87_384), 'base64'));
  if (!size || size.width <= 0 || size.height <= 0) return UNKNOWN;
  const { width, height } = size;
  const shrink = Math.min(1, MAX_SIDE / Math.max(width, height), Math.sqrt(MAX_PIXELS / (width * height)));
  const messages = Math.ceil((Math.floor(width * shrink) * Math.floor(height * shrink)) / PIXELS_PER_TOKEN);
  const gemini = width <= 384 && height <= 384 ? TILE_TOKENS : Math.ceil(width / TILE) * Math.ceil(height / TILE) * TILE_TOKENS;
  return Math.max(messages, gemini);
}
