import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { bodyModel, keyGuard } from '../accounts/key-guard.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { SubmitReceipt } from '../tasks/tasks.schemas.ts';
import { VideoRequest } from './videos.schemas.ts';
import { submitVideo } from './videos.service.ts';
import { declareSurface } from '../../http/surface.ts';

export function videosRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['bearer'] });
    app.post(
      '/v1/videos/generations',
      {
        config: { callSurface: 'videos' },
        preValidation: keyGuard(ctx, { model: bodyModel() }),
        schema: {
          tags: ['videos'],
          summary: 'Submit a video generation task',
          security: [{ bearer: [] }],
          body: VideoRequest,
          response: { 200: SubmitReceipt, 402: ErrorResponses[400], 503: ErrorResponses[400], ...ErrorResponses },
        },
      },
      (request) => submitVideo(ctx, request.apiKey!, request.body, request.callEntry),
    );
  };
}
