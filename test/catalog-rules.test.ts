import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/core/errors.ts';
import { normalizeImageRequest } from '../src/modules/catalog/image-rules.ts';
import { normalizeVideoRequest } from '../src/modules/catalog/video-rules.ts';
import { MODELS, resolveModel } from '../src/core/catalog/models.ts';
import fs from 'node:fs';
import { pixelSizesMarkdown } from '../src/modules/catalog/pixel-doc.ts';
import { imagePixelSize, videoPixelSize } from '../src/core/catalog/pixels.ts';
import { characters } from '../src/modules/catalog/rule-kit.ts';

// One test per rule of the catalog (core/catalog: video, image and avatar-review fields, and the text limits), accepting and rejecting at each bound.

const video = (body: Record<string, unknown>) => normalizeVideoRequest({ model: 'vidgen-2.0', prompt: 'a cat', ...body } as any);
const image = (body: Record<string, unknown>) => normalizeImageRequest({ prompt: 'a cat', ...body } as any);

function rejects(run: () => unknown, field: string) {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).type).toBe('invalid_request_error');
    expect((err as ApiError).message).toContain(field);
    return;
  }
  throw new Error(`expected a 400 naming ${field}`);
}

const urls = (n: number, prefix = 'https://example.com/i') => Array.from({ length: n }, (_, i) => `${prefix}${i}.png`);

describe('2.1 model identifiers and aliases', () => {
  it.each([
    ['imggen-2-ext', 'imggen-2'],
    ['imgflash-ext', 'imgflash-3.1-preview'],
    ['imgflash', 'imgflash-3.1-preview'],
    ['imgflash-3.1-preview-official', 'imgflash-3.1-preview'],
    ['imgpro-ext', 'imgpro-3-preview'],
    ['imglite', 'imglite-3.1'],
  ])('alias %s resolves to %s', (alias, main) => {
    expect(resolveModel(alias)?.id).toBe(main);
    expect(image({ model: alias }).model).toBe(main);
  });
  it('every main identifier of 2.1 is in the catalogue', () => {
    const ids = MODELS.map((m) => m.id).sort();
    expect(ids).toEqual(
      ['vidgen-2.0', 'vidgen-2.0-fast', 'vidgen-2.0-mini', 'vidgen-1-5-pro', 'vidgen-1-0-pro-fast', 'vidgen-1-0-pro-quality',
        'imggen-2-official', 'imggen-2', 'imgart-5-0-pro', 'imgart-5-0-lite', 'imgflash-3.1-preview', 'imgpro-3-preview', 'imglite-3.1'].sort(),
    );
  });
  it('an unknown model is a 400 naming model', () => {
    rejects(() => image({ model: 'imggen-9' }), 'model');
    rejects(() => video({ model: 'vidgen-9' }), 'model');
    rejects(() => image({ model: 'vidgen-2.0' }), 'model');
  });
  it('4.6.1 model omitted on the images operation means imggen-2-official', () => {
    expect(image({}).model).toBe('imggen-2-official');
  });
});

describe('4.5.1 vidgen-2.0, vidgen-2.0-fast, vidgen-2.0-mini', () => {
  it('duration: 3 rejected, 4 accepted, 15 accepted, 16 rejected; default 5', () => {
    rejects(() => video({ duration: 3 }), 'duration');
    expect(video({ duration: 4 }).params.duration).toBe(4);
    expect(video({ duration: 15 }).params.duration).toBe(15);
    rejects(() => video({ duration: 16 }), 'duration');
    expect(video({}).params.duration).toBe(5);
  });
  it('prompt: 4000 characters accepted, 4001 rejected; vidgen-2.0-mini has no cap', () => {
    expect(video({ prompt: 'x'.repeat(4000) }).params.prompt).toHaveLength(4000);
    rejects(() => video({ prompt: 'x'.repeat(4001) }), 'prompt');
    rejects(() => video({ model: 'vidgen-2.0-fast', prompt: 'x'.repeat(4001) }), 'prompt');
    expect(video({ model: 'vidgen-2.0-mini', prompt: 'x'.repeat(20_000) }).params.prompt).toHaveLength(20_000);
  });
  it('prompt: characters are code points (4000 emoji accepted, 4001 refused as "got 4001")', () => {
    expect(video({ prompt: '\u{1F600}'.repeat(4000) }).params.prompt).toHaveLength(8000);
    expect(() => video({ prompt: '\u{1F600}'.repeat(4001) })).toThrow('(got 4001)');
    // A lone surrogate is one code point, as in JSON's \ud800.
    expect(characters('\ud800a\udc00\u{1F600}')).toBe(4);
  });
  it('prompt: required for text-to-video, optional with an image or video reference', () => {
    rejects(() => video({ prompt: undefined }), 'prompt');
    expect(video({ prompt: undefined, image_urls: urls(1) }).params.prompt).toBeUndefined();
    expect(video({ prompt: undefined, video_urls: urls(1, 'https://example.com/v') }).params.prompt).toBeUndefined();
  });
  it('size: the seven values, default 16:9', () => {
    for (const size of ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive']) expect(video({ size }).params.ratio).toBe(size);
    expect(video({}).params.ratio).toBe('16:9');
    rejects(() => video({ size: '2:1' }), 'size');
  });
  it('resolution: 480p, 720p (default), 1080p; 4k only on vidgen-2.0', () => {
    expect(video({}).params.resolution).toBe('720p');
    for (const r of ['480p', '720p', '1080p', '4k']) expect(video({ resolution: r }).params.resolution).toBe(r);
    rejects(() => video({ model: 'vidgen-2.0-fast', resolution: '4k' }), 'resolution');
    rejects(() => video({ model: 'vidgen-2.0-mini', resolution: '4k' }), 'resolution');
    expect(video({ model: 'vidgen-2.0-fast', resolution: '1080p' }).params.resolution).toBe('1080p');
    rejects(() => video({ resolution: '2k' }), 'resolution');
  });
  it('seed: -2 rejected, -1 and 2^32-1 accepted, 2^32 rejected', () => {
    rejects(() => video({ seed: -2 }), 'seed');
    expect(video({ seed: -1 }).params.seed).toBe(-1);
    expect(video({ seed: 2 ** 32 - 1 }).params.seed).toBe(2 ** 32 - 1);
    rejects(() => video({ seed: 2 ** 32 }), 'seed');
  });
  it('generate_audio defaults to true, return_last_frame to false', () => {
    expect(video({}).params).toMatchObject({ audio: true, return_last_frame: false });
    expect(video({ generate_audio: false, return_last_frame: true }).params).toMatchObject({ audio: false, return_last_frame: true });
  });
  it('tools: only web_search', () => {
    expect(video({ tools: [{ type: 'web_search' }] }).params.tools).toEqual([{ type: 'web_search' }]);
    rejects(() => video({ tools: [{ type: 'code' }] }), 'tools[0].type');
  });
  it('image_urls: 9 accepted, 10 rejected', () => {
    expect(video({ image_urls: urls(9) }).params.image_urls).toHaveLength(9);
    rejects(() => video({ image_urls: urls(10) }), 'image_urls');
  });
  it('video_urls: 3 accepted, 4 rejected', () => {
    expect(video({ video_urls: urls(3) }).params.video_urls).toHaveLength(3);
    rejects(() => video({ video_urls: urls(4) }), 'video_urls');
  });
  it('image_with_roles: roles first_frame, last_frame, reference_image', () => {
    const roles = ['first_frame', 'last_frame', 'reference_image'].map((role, i) => ({ url: urls(3)[i], role }));
    expect(video({ image_with_roles: roles }).params.image_with_roles).toHaveLength(3);
    rejects(() => video({ image_with_roles: [{ url: urls(1)[0], role: 'middle_frame' }] }), 'image_with_roles[0].role');
  });
  it('rule 1: image_urls and image_with_roles must not be sent together', () => {
    rejects(() => video({ image_urls: urls(1), image_with_roles: [{ url: urls(1)[0], role: 'first_frame' }] }), 'image_urls');
  });
  it('rule 2: first/last frame images make video_urls and audio_urls unavailable', () => {
    const first = [{ url: urls(1)[0], role: 'first_frame' }];
    rejects(() => video({ image_with_roles: first, video_urls: urls(1) }), 'video_urls');
    rejects(() => video({ image_with_roles: [{ url: urls(1)[0], role: 'last_frame' }], audio_urls: urls(1) }), 'audio_urls');
    expect(video({ image_with_roles: [{ url: urls(1)[0], role: 'reference_image' }], video_urls: urls(1) }).params.video_urls).toHaveLength(1);
  });
  it('rule 3: asset URLs only for vidgen-2.0 and vidgen-2.0-fast', () => {
    expect(video({ image_urls: ['asset://as_1'] }).assetIds).toEqual(['as_1']);
    expect(video({ model: 'vidgen-2.0-fast', image_with_roles: [{ url: 'asset://as_2', role: 'reference_image' }] }).assetIds).toEqual(['as_2']);
    expect(video({ video_urls: ['asset://as_3'], audio_urls: ['asset://as_4'] }).assetIds).toEqual(['as_3', 'as_4']);
    rejects(() => video({ model: 'vidgen-2.0-mini', image_urls: ['asset://as_1'] }), 'image_urls[0]');
    rejects(() => video({ image_with_roles: [{ url: 'asset://as_1', role: 'first_frame' }] }), 'image_with_roles[0].role');
    rejects(() => video({ model: 'vidgen-1-5-pro', image_urls: ['asset://as_1'] }), 'image_urls[0]');
    rejects(() => image({ image_urls: ['asset://as_1'] }), 'image_urls[0]');
  });
});

describe('4.5.2 vidgen-1-5-pro', () => {
  const v15 = (body: Record<string, unknown>) => video({ model: 'vidgen-1-5-pro', ...body });
  it('duration: 3 rejected, 4 accepted, 12 accepted, 13 rejected', () => {
    rejects(() => v15({ duration: 3 }), 'duration');
    expect(v15({ duration: 4 }).params.duration).toBe(4);
    expect(v15({ duration: 12 }).params.duration).toBe(12);
    rejects(() => v15({ duration: 13 }), 'duration');
  });
  it('prompt is required', () => rejects(() => v15({ prompt: undefined, image_urls: urls(1) }), 'prompt'));
  it('aspect_ratio: six values, default 16:9; resolution 480p/720p/1080p, default 720p', () => {
    expect(v15({}).params).toMatchObject({ ratio: '16:9', resolution: '720p', audio: true, camerafixed: false });
    for (const r of ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9']) expect(v15({ aspect_ratio: r }).params.ratio).toBe(r);
    rejects(() => v15({ aspect_ratio: 'adaptive' }), 'aspect_ratio');
    rejects(() => v15({ resolution: '4k' }), 'resolution');
  });
  it('seed: -2 rejected, -1 and 2^32-1 accepted, 2^32 rejected', () => {
    rejects(() => v15({ seed: -2 }), 'seed');
    expect(v15({ seed: -1 }).params.seed).toBe(-1);
    expect(v15({ seed: 2 ** 32 - 1 }).params.seed).toBe(2 ** 32 - 1);
    rejects(() => v15({ seed: 2 ** 32 }), 'seed');
  });
  it('image_urls: 1 (first frame) or 2 (first + last), not 3', () => {
    expect(v15({ image_urls: urls(2) }).params.image_urls).toHaveLength(2);
    rejects(() => v15({ image_urls: urls(3) }), 'image_urls');
  });
  it('image_with_roles: one of each role at most; image_urls and image_with_roles not together', () => {
    const f = { url: urls(1)[0], role: 'first_frame' };
    const l = { url: urls(1)[0], role: 'last_frame' };
    expect(v15({ image_with_roles: [f, l] }).params.image_with_roles).toHaveLength(2);
    rejects(() => v15({ image_with_roles: [f, f] }), 'first_frame');
    rejects(() => v15({ image_with_roles: [{ ...f, role: 'reference_image' }] }), 'role');
    rejects(() => v15({ image_urls: urls(1), image_with_roles: [f] }), 'image_with_roles');
  });
});

describe('4.5.3 vidgen-1-0-pro-fast and vidgen-1-0-pro-quality', () => {
  const v10 = (model: string, body: Record<string, unknown>) => video({ model, ...body });
  it('duration: 1 rejected, 2 accepted, 12 accepted, 13 rejected', () => {
    for (const model of ['vidgen-1-0-pro-fast', 'vidgen-1-0-pro-quality']) {
      rejects(() => v10(model, { duration: 1 }), 'duration');
      expect(v10(model, { duration: 2 }).params.duration).toBe(2);
      expect(v10(model, { duration: 12 }).params.duration).toBe(12);
      rejects(() => v10(model, { duration: 13 }), 'duration');
    }
  });
  it('resolution defaults to 1080p, aspect_ratio to 16:9; no audio', () => {
    expect(v10('vidgen-1-0-pro-fast', {}).params).toMatchObject({ resolution: '1080p', ratio: '16:9', audio: false });
    rejects(() => v10('vidgen-1-0-pro-fast', { audio: true }), 'audio');
  });
  it('seed: -2 rejected, -1 and 2^32-1 accepted, 2^32 rejected', () => {
    rejects(() => v10('vidgen-1-0-pro-quality', { seed: -2 }), 'seed');
    expect(v10('vidgen-1-0-pro-quality', { seed: 2 ** 32 - 1 }).params.seed).toBe(2 ** 32 - 1);
    rejects(() => v10('vidgen-1-0-pro-quality', { seed: 2 ** 32 }), 'seed');
  });
  it('last_frame only on quality; fast cannot use first and last frame together', () => {
    const f = { url: urls(1)[0], role: 'first_frame' };
    const l = { url: urls(1)[0], role: 'last_frame' };
    expect(v10('vidgen-1-0-pro-quality', { image_with_roles: [f, l] }).params.image_with_roles).toHaveLength(2);
    expect(v10('vidgen-1-0-pro-fast', { image_with_roles: [f] }).params.image_with_roles).toHaveLength(1);
    rejects(() => v10('vidgen-1-0-pro-fast', { image_with_roles: [f, l] }), 'role');
    rejects(() => v10('vidgen-1-0-pro-quality', { image_with_roles: [l, l] }), 'last_frame');
  });
});

describe('4.6.1 imggen-2-official', () => {
  it('prompt is required and not empty', () => rejects(() => image({ prompt: '  ' }), 'prompt'));
  it('size: default 1:1, the 15 ratios, auto falls back to 1:1, <w>x<h> pixel sizes', () => {
    expect(image({}).size).toBe('1:1');
    expect(image({ size: 'auto' })).toMatchObject({ size: '1:1', width: 1024, height: 1024 });
    for (const size of ['3:2', '2:3', '4:3', '3:4', '5:4', '4:5', '16:9', '9:16', '2:1', '1:2', '3:1', '1:3', '21:9', '9:21']) expect(image({ size }).size).toBe(size);
    expect(image({ size: '1536x1024' })).toMatchObject({ width: 1536, height: 1024 });
    rejects(() => image({ size: '1000x1000' }), 'size');
    rejects(() => image({ size: '7:5' }), 'size');
  });
  it('resolution: 1k (default), 2k, 4k; 1:1 is 1024, 2048, 2880', () => {
    expect(image({})).toMatchObject({ resolution: '1k', width: 1024, height: 1024 });
    expect(image({ resolution: '2k' })).toMatchObject({ width: 2048, height: 2048 });
    expect(image({ resolution: '4K' })).toMatchObject({ resolution: '4k', width: 2880, height: 2880 });
    rejects(() => image({ resolution: '8k' }), 'resolution');
  });
  it('quality: auto (default), low, medium, high', () => {
    expect(image({}).quality).toBe('auto');
    expect(image({ quality: 'high' }).quality).toBe('high');
    rejects(() => image({ quality: 'ultra' }), 'quality');
  });
  it('background: transparent is silently downgraded to auto', () => {
    expect(image({ background: 'transparent' }).background).toBe('auto');
    expect(image({ background: 'opaque' }).background).toBe('opaque');
    rejects(() => image({ background: 'green' }), 'background');
  });
  it('moderation: auto or low', () => {
    expect(image({ moderation: 'low' }).moderation).toBe('low');
    rejects(() => image({ moderation: 'off' }), 'moderation');
  });
  it('output_format: png (default), jpeg, webp', () => {
    expect(image({}).output_format).toBe('png');
    expect(image({ output_format: 'webp' }).output_format).toBe('webp');
    rejects(() => image({ output_format: 'gif' }), 'output_format');
  });
  it('output_compression: -1 rejected, 0 and 100 accepted, 101 rejected, and only for jpeg/webp', () => {
    rejects(() => image({ output_format: 'jpeg', output_compression: -1 }), 'output_compression');
    expect(image({ output_format: 'jpeg', output_compression: 0 }).output_compression).toBe(0);
    expect(image({ output_format: 'webp', output_compression: 100 }).output_compression).toBe(100);
    rejects(() => image({ output_format: 'jpeg', output_compression: 101 }), 'output_compression');
    rejects(() => image({ output_compression: 50 }), 'output_compression');
  });
  it('n: 0 rejected, 1 and 4 accepted, 5 rejected; default 1', () => {
    rejects(() => image({ n: 0 }), 'n');
    expect(image({ n: 1 }).n).toBe(1);
    expect(image({ n: 4 }).n).toBe(4);
    rejects(() => image({ n: 5 }), 'n');
    expect(image({}).n).toBe(1);
  });
  it('image_urls: 16 accepted, 17 rejected', () => {
    expect(image({ image_urls: urls(16) }).image_urls).toHaveLength(16);
    rejects(() => image({ image_urls: urls(17) }), 'image_urls');
  });
  it('mask_url only together with image_urls', () => {
    rejects(() => image({ mask_url: 'https://example.com/m.png' }), 'mask_url');
    expect(image({ mask_url: 'https://example.com/m.png', image_urls: urls(1) }).mask_url).toBe('https://example.com/m.png');
  });
});

describe('4.6.2-4.6.7 the other image models', () => {
  it('4.6.2 imggen-2: 15 ratios, 1k/2k/4k, 16 references (URL and base64 mixed)', () => {
    expect(image({ model: 'imggen-2', size: '9:21', resolution: '4k' })).toMatchObject({ model: 'imggen-2', size: '9:21' });
    expect(image({ model: 'imggen-2', image_urls: [...urls(15), 'data:image/png;base64,iVBORw0KGgo='] }).image_urls).toHaveLength(16);
    rejects(() => image({ model: 'imggen-2', image_urls: urls(17) }), 'image_urls');
    rejects(() => image({ model: 'imggen-2', size: 'auto' }), 'size');
  });
  it('4.6.3 imgart-5-0-pro: 1K/2K, one image per call, 10 references, png or jpeg', () => {
    expect(image({ model: 'imgart-5-0-pro', resolution: '2K' }).resolution).toBe('2k');
    rejects(() => image({ model: 'imgart-5-0-pro', resolution: '4K' }), 'resolution');
    rejects(() => image({ model: 'imgart-5-0-pro', n: 2 }), 'n');
    expect(image({ model: 'imgart-5-0-pro', image_urls: urls(10) }).image_urls).toHaveLength(10);
    rejects(() => image({ model: 'imgart-5-0-pro', image_urls: urls(11) }), 'image_urls');
    rejects(() => image({ model: 'imgart-5-0-pro', output_format: 'webp' }), 'output_format');
  });
  it('4.6.4 imgart-5-0-lite: 2K/3K, n', () => {
    expect(image({ model: 'imgart-5-0-lite' }).resolution).toBe('2k');
    expect(image({ model: 'imgart-5-0-lite', resolution: '3K', n: 4 })).toMatchObject({ resolution: '3k', n: 4 });
    rejects(() => image({ model: 'imgart-5-0-lite', resolution: '1K' }), 'resolution');
  });
  it('4.6.5 imgflash-3.1-preview: up to 4K, 14 references, extreme ratios', () => {
    for (const size of ['1:4', '4:1', '1:8', '8:1']) expect(image({ model: 'imgflash-3.1-preview', size }).size).toBe(size);
    expect(image({ model: 'imgflash', resolution: '4K', size: '8:1' })).toMatchObject({ width: 3840, height: 480 });
    expect(image({ model: 'imgflash-ext', image_urls: urls(14) }).image_urls).toHaveLength(14);
    rejects(() => image({ model: 'imgflash-3.1-preview', image_urls: urls(15) }), 'image_urls');
  });
  it('4.6.6 imgpro-3-preview: 1K/2K, n', () => {
    expect(image({ model: 'imgpro-ext', resolution: '2K', n: 3 })).toMatchObject({ model: 'imgpro-3-preview', n: 3 });
    rejects(() => image({ model: 'imgpro-3-preview', resolution: '4K' }), 'resolution');
  });
  it('4.6.7 imglite-3.1: 2K, 4K and 0.5K are downgraded to 1K without an error; 14 references', () => {
    for (const r of ['2K', '4K', '0.5K', '1K']) expect(image({ model: 'imglite', resolution: r })).toMatchObject({ resolution: '1k', width: 1024 });
    rejects(() => image({ model: 'imglite-3.1', resolution: '3K' }), 'resolution');
    expect(image({ model: 'imglite-3.1', image_urls: urls(14) }).image_urls).toHaveLength(14);
    rejects(() => image({ model: 'imglite-3.1', image_urls: urls(15) }), 'image_urls');
  });
});

describe('pixel sizes', () => {
  it('1:1 at 1k/2k/4k is 1024, 2048, 2880; 16:9 at 4k is 3840x2160', () => {
    expect(imagePixelSize('1:1', '1k')).toEqual({ width: 1024, height: 1024 });
    expect(imagePixelSize('1:1', '2k')).toEqual({ width: 2048, height: 2048 });
    expect(imagePixelSize('1:1', '4k')).toEqual({ width: 2880, height: 2880 });
    expect(imagePixelSize('16:9', '4k')).toEqual({ width: 3840, height: 2160 });
  });
  it('no size holds more pixels than its tier\'s 1:1 image, and every side is a multiple of 16', () => {
    for (const ratio of new Set(MODELS.flatMap((m) => (m.kind === 'image' ? m.ratios : [])))) {
      for (const tier of ['0.5k', '1k', '2k', '3k', '4k']) {
        const { width, height } = imagePixelSize(ratio, tier);
        const square = imagePixelSize('1:1', tier).width;
        expect(width * height, `${ratio} ${tier}`).toBeLessThanOrEqual(square * square);
        expect([width % 16, height % 16]).toEqual([0, 0]);
      }
    }
    expect(imagePixelSize('4:3', '4k')).toEqual({ width: 3312, height: 2480 });
    expect(imagePixelSize('3:4', '4k')).toEqual({ width: 2480, height: 3312 });
  });
  it('docs/pixel-sizes.md is the table the code produces (npm run docs:pixels)', () => {
    expect(fs.readFileSync(new URL('../docs/pixel-sizes.md', import.meta.url), 'utf8')).toBe(pixelSizesMarkdown());
  });
  it('video frames: 16:9 720p is 1280x720, 9:16 1080p is 1080x1920', () => {
    expect(videoPixelSize('16:9', '720p')).toEqual({ width: 1280, height: 720 });
    expect(videoPixelSize('9:16', '1080p')).toEqual({ width: 1080, height: 1920 });
  });
});
