import type { ImageParams } from '../../core/task-params.ts';
import { resolveModel } from '../../core/catalog/models.ts';
import type { VideoParams } from '../../core/task-params.ts';

/**
 * Turns stored, normalized parameters back into one of our own request bodies, for an upstream that
 * speaks our API itself (relay channels): derived fields are dropped and renamed fields restored.
 */
export function upstreamRequest(params: { model: string } & Partial<ImageParams & VideoParams>, upstreamModel: string): Record<string, unknown> {
  const { width: _w, height: _h, format_asked: _asked, ratio, audio, ...rest } = params;
  const model = resolveModel(params.model);
  const body: Record<string, unknown> = { ...rest, model: upstreamModel };
  if (model?.kind === 'video') {
    body[model.ratioField] = ratio;
    if (model.family === '2.0') body.generate_audio = audio;
    if (model.family === '1.5') body.audio = audio;
  }
  return body;
}
