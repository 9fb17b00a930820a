import { MODELS, VIDEO_RATIOS } from '../../core/catalog/models.ts';
import { imagePixelSize, pixelTable, videoPixelSize } from '../../core/catalog/pixels.ts';

const IMAGE_TIERS = ['0.5k', '1k', '2k', '3k', '4k'];
const VIDEO_TIERS = ['480p', '720p', '1080p', '4k'];

function markdownTable(table: Record<string, Record<string, string>>, tiers: string[]): string {
  const rows = Object.entries(table).map(([ratio, sizes]) => `| ${ratio} | ${tiers.map((t) => sizes[t]).join(' | ')} |`);
  return [`| ratio | ${tiers.join(' | ')} |`, `|${'---|'.repeat(tiers.length + 1)}`, ...rows].join('\n');
}

/** docs/pixel-sizes.md, generated so the document cannot drift from the code (a test compares them). */
export function pixelSizesMarkdown(): string {
  const imageRatios = [...new Set(MODELS.flatMap((m) => (m.kind === 'image' ? m.ratios : [])))];
  return `# Pixel sizes

Generated from \`src/core/catalog/pixels.ts\` by \`npm run docs:pixels\`. The public API fixes 1:1 (1024, 2048,
2880 at 1k/2k/4k). Every other image size follows one rule: the long side is the tier's base (512,
1024, 2048, 3072, 3840), then both sides shrink until the image holds no more pixels than the tier's
1:1 image, and both are rounded to a multiple of 16 (down instead of to the nearest where the nearest
would hold more pixels than the 1:1 image: 4:3 and 3:4 at 4k). So 16:9 at 4k is exactly 3840x2160
and 1:1 at 4k is 2880x2880. A \`<width>x<height>\` size (imggen-2-official) is of the smallest of its 1k, 2k and 4k
tiers whose 1:1 image holds at least its pixels, and is billed at that tier. Which ratios and tiers a model
accepts is in \`src/core/catalog/models.ts\`.

## Images

${markdownTable(pixelTable(imageRatios, IMAGE_TIERS, imagePixelSize), IMAGE_TIERS)}

## Videos

The short side is the resolution's line count; sides are even (H.264 needs it). \`adaptive\` renders at 16:9.

${markdownTable(pixelTable(VIDEO_RATIOS, VIDEO_TIERS, videoPixelSize), VIDEO_TIERS)}
`;
}
