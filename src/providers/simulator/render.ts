import type { RenderSpec } from '../../core/task-provider.ts';
import { renderImage, renderLastFrame, renderVideo } from './media.ts';

/** The bytes of a simulated file, from the parameters its signed link carries. */
export async function renderSpec(spec: RenderSpec): Promise<Buffer> {
  switch (spec.k) {
    case 'image':
      return renderImage({ width: spec.w, height: spec.h, format: spec.f, compression: spec.q, seed: spec.s, transparent: spec.t });
    case 'video':
      return renderVideo({ width: spec.w, height: spec.h, durationSeconds: spec.d, seed: spec.s, withAudio: spec.a });
    case 'frame':
      return renderLastFrame({ width: spec.w, height: spec.h, durationSeconds: spec.d, seed: spec.s });
  }
}
