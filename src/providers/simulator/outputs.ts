import type { ImageParams } from '../../core/task-params.ts';
import type { VideoParams } from '../../core/task-params.ts';
export { resultTtlSeconds } from '../../core/catalog/models.ts';

// What the simulator produces for a task, read off its normalized parameters.

export function imageOutput(_model: string, p: ImageParams) {
  return {
    width: p.width,
    height: p.height,
    n: p.n,
    format: p.output_format,
    compression: p.output_compression,
    transparent: false,
  };
}

export function videoOutput(_model: string, p: VideoParams) {
  return { width: p.width, height: p.height, duration: p.duration, resolution: p.resolution, audio: p.audio, lastFrame: p.return_last_frame };
}
