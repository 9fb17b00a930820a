import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { bodyModel, keyGuard } from '../accounts/key-guard.ts';
import { DEFAULT_IMAGE_MODEL } from '../../core/catalog/models.ts';
import { ErrorResponses } from '../../http/schemas.ts';
import { ImageRequest } from './images.schemas.ts';
import { SubmitReceipt } from '../tasks/tasks.schemas.ts';
import { submitImages } from './images.service.ts';
import { declareSurface } from '../../http/surface.ts';

export function imagesRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['bearer'] });
    app.post(
      '/v1/images/generations',
      {
        config: { callSurface: 'images' },
        preValidation: keyGuard(ctx, { model: bodyModel(DEFAULT_IMAGE_MODEL) }),
        schema: {
          tags: ['images'],
          summary: 'Submit an image generation task',
          security: [{ bearer: [] }],
          body: ImageRequest,
          response: { 200: SubmitReceipt, 402: ErrorResponses[400], 503: ErrorResponses[400], ...ErrorResponses },
        },
      },
      (request) => submitImages(ctx, request.apiKey!, request.body, request.callEntry),
    );
  };
}
