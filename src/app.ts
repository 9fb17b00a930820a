import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from './context.ts';
import { CORS_HEADERS, registerPreflight } from './http/cors.ts';
import { clientErrorHandler, errorHandler, registerErrorHandling } from './http/error-handler.ts';
import { keepJsonBytes } from './http/json-body.ts';
import { badRequest, serviceUnavailable } from './core/errors.ts';
import type { Config } from './config.ts';
import { ErrorEnvelope, ErrorResponses } from './http/schemas.ts';
import { collectRoutes } from './http/route-table.ts';
import { declareSurface } from './http/surface.ts';
import { adminRoutes } from './modules/admin/admin.routes.ts';
import { adminTasksRoutes } from './modules/admin/admin-tasks.routes.ts';
import { registerConsolePages } from './modules/console/console-pages.ts';
import { consoleRoutes } from './modules/console/console.routes.ts';
import { sessionRoutes } from './modules/console/session.routes.ts';
import { oidcRoutes } from './modules/oidc/oidc.routes.ts';
import { balanceRoutes } from './modules/balance/balance.routes.ts';
import { systemRoutes } from './modules/system/system.routes.ts';
import { channelsRoutes } from './modules/channels/channels.routes.ts';
import { imagesRoutes } from './modules/images/images.routes.ts';
import { videosRoutes } from './modules/videos/videos.routes.ts';
import { tasksRoutes } from './modules/tasks/tasks.routes.ts';
import { filesRoutes } from './modules/files/files.routes.ts';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.ts';
import { avatarsRoutes } from './modules/avatars/avatars.routes.ts';
import { upstreamCallbacksRoutes } from './modules/upstream-callbacks/upstream-callbacks.routes.ts';
import { fileSigningSecret } from './blobs/signed-urls.ts';
import { nativeRoutes } from './modules/text/native.routes.ts';
import { messagesRoutes } from './modules/messages/messages.routes.ts';
import { chatRoutes } from './modules/chat/chat.routes.ts';
import { responsesRoutes } from './modules/responses/responses.routes.ts';
import { modelsRoutes } from './modules/models/models.routes.ts';
import { adminCodesRoutes, consoleRedeemRoutes, keyRedeemRoutes } from './modules/codes/codes.routes.ts';
import { adminInvitesRoutes, signupRoutes } from './modules/signup/signup.routes.ts';
import { registerCallLog } from './modules/calls/calls.hooks.ts';
import { adminCallsRoutes, consoleCallsRoutes } from './modules/calls/calls.routes.ts';
import { adminTopupsRoutes, consoleTopupsRoutes, stripeWebhookRoutes } from './modules/topups/topups.routes.ts';
import { documentModels } from './modules/models/models.openapi.ts';
import { addRequestSpans } from './http/request-spans.ts';
import { requestIdOf } from './lib/request-ids.ts';

// Postgres text cannot hold U+0000: a NUL in an id, a query value or a body string reached the
// database and came back as a 500. No caller needs one, so it is refused up front on every backend.
const NUL_REFUSED = 'Text must not contain the NUL character (U+0000)';
// JSON.parse reads any depth without recursing, but JSON.stringify and the format translators
// recurse: a tool schema 8,000 levels deep overflowed the stack (a 500). No request nests this deep.
const MAX_DEPTH = 128;
const TOO_DEEP = `The body is nested more than ${MAX_DEPTH} levels deep`;

/** What is wrong with a parsed body as a whole (a NUL anywhere, or too deep), in one walk. */
function bodyProblem(body: unknown): string | undefined {
  // A loop, not recursion: the walk itself must not overflow the stack.
  const pending = [body];
  const depths = [0];
  while (pending.length > 0) {
    const value = pending.pop();
    const depth = depths.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) return NUL_REFUSED;
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_DEPTH) return TOO_DEEP;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          pending.push(value[i]);
          depths.push(depth + 1);
        }
        continue;
      }
      // Parsed JSON: plain objects whose keys are all their own, so for...in sees exactly those
      // (Object.entries made an array per object on every request).
      for (const key in value) {
        if (key.includes('\0')) return NUL_REFUSED;
        pending.push((value as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
    }
  }
  return undefined;
}
const refuseBadBody = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
  const problem = bodyProblem(request.body);
  done(problem ? badRequest(problem) : undefined);
};

/**
 * No pino child per request (a measurable share of a cheap request): the few lines we log carry
 * the request id themselves. The logger's child is itself; a `childLoggerFactory` would do the
 * same, but Fastify then checks the logger's seven methods on every request.
 */
function requestsShareTheLogger(logger: FastifyBaseLogger): FastifyBaseLogger {
  const shared = Object.create(logger) as FastifyBaseLogger;
  shared.child = () => shared;
  return shared;
}

/**
 * A client has REQUEST_TIMEOUT_MS to send its whole request (then 408 from the client error
 * handler), its head within HEADERS_TIMEOUT_MS; Node checks the deadlines on an interval, so the
 * interval is a fraction of the shorter one.
 */
function httpTimeouts(http: Config['http']) {
  return {
    requestTimeout: http.requestTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    connectionTimeout: http.idleTimeoutMs,
    http: {
      headersTimeout: http.headersTimeoutMs,
      requestTimeout: http.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(http.headersTimeoutMs / 4))),
    },
  };
}

/** The whole HTTP surface. It never listens: main.ts does, tests use `inject`. */
export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const handleError = errorHandler(ctx.config.bodyLimitBytes);
  const app = Fastify({
    loggerInstance: requestsShareTheLogger(ctx.logger as FastifyBaseLogger),
    // One access line per request, written by our onResponse hook, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: ctx.config.bodyLimitBytes,
    requestIdHeader: false,
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    // JSON types count as sent: `n: "2"` is an error, not a 2.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true } },
    // Fastify's own 503 while closing has its own body; the onRequest hook below answers in ours.
    return503OnClosing: false,
    ...httpTimeouts(ctx.config.http),
    // Behind nginx the client's address is in X-Forwarded-For; only the configured proxies are believed.
    ...(ctx.config.trustProxy ? { trustProxy: ctx.config.trustProxy.split(',').map((a) => a.trim()) } : {}),
    // Signed result links carry their render parameters in the path.
    routerOptions: { maxParamLength: 1000 },
    // A bad percent-encoding or an over-long path parameter is refused before routing, so neither the
    // error handler nor our onRequest hook sees it: without this Fastify answers in its own body.
    frameworkErrors: (error, request, reply) => {
      if (request.headers.origin !== undefined) reply.headers(CORS_HEADERS);
      reply.header('x-request-id', request.id);
      handleError(error, request, reply);
    },
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // First, so that it sees every route; checked once all are registered.
  const routes = collectRoutes(app);
  registerErrorHandling(app, ctx.config.bodyLimitBytes);
  app.addSchema(ErrorEnvelope);
  keepJsonBytes(app);

  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  addRequestSpans(app);
  // Callback-style hooks: on every request, so no promise allocation for work that is synchronous.
  app.addHook('onRequest', (request, reply, done) => {
    // Only a browser reads CORS headers, and it always names its origin on a cross-origin call.
    if (request.headers.origin !== undefined) reply.headers(CORS_HEADERS);
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('connection', 'close');
      return done(serviceUnavailable('The gateway is shutting down: retry the request'));
    }
    done(request.url.includes('%00') ? badRequest(NUL_REFUSED) : undefined);
  });
  // A route that names a resource in its path answers 404 when there is none: documented on each.
  app.addHook('onRoute', (route) => {
    const responses = (route.schema as { response?: Record<string, unknown> } | undefined)?.response;
    if (route.url.includes('/:') && responses && !responses[404]) responses[404] = ErrorResponses[400];
  });
  // The body check goes only on routes that can take a body, after their own guards.
  app.addHook('onRoute', (route) => {
    if ([route.method].flat().every((method) => method === 'GET' || method === 'HEAD')) return;
    route.preValidation = [route.preValidation ?? []].flat().concat(refuseBadBody);
  });
  const accessLog = ctx.logger.isLevelEnabled('info');
  app.addHook('onResponse', (request, reply, done) => {
    ctx.metrics.observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    if (accessLog) {
      // A Gemini client may send its API key as ?key=: never written to the log.
      const url = request.url.includes('key=') ? request.url.replace(/([?&]key=)[^&]*/g, '$1[redacted]') : request.url;
      request.log.info({ reqId: request.id, method: request.method, url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request');
    }
    done();
  });

  registerPreflight(app);
  registerCallLog(app, ctx.callLog);

  await app.register(swagger, {
    // Model enums and working examples, in the document only (models.openapi.ts says why).
    transform: documentModels,
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Generation Gateway', version: '1', description: 'HTTP JSON gateway for generative models, billed per API key.' },
      servers: [{ url: ctx.config.publicBaseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API key' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'API key (messages endpoint)' },
          googApiKey: { type: 'apiKey', in: 'header', name: 'x-goog-api-key', description: 'API key (native text and Gemini surface; also ?key=)' },
          admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN (or an operator console session)' },
          consoleSession: { type: 'apiKey', in: 'cookie', name: 'gw_console', description: 'Console session cookie; writes also need the x-csrf-token header' },
        },
      },
    },
  });
  await app.register(async (docs) => {
    declareSurface(docs, { envelope: 'standard', keySources: [] });
    await docs.register(swaggerUi, { routePrefix: '/docs' });
  });

  await app.register(systemRoutes(ctx));
  await app.register(balanceRoutes(ctx));
  await app.register(adminRoutes(ctx));
  await app.register(adminCodesRoutes(ctx));
  await app.register(adminInvitesRoutes(ctx));
  await app.register(keyRedeemRoutes(ctx));
  await app.register(channelsRoutes(ctx));
  await app.register(imagesRoutes(ctx));
  await app.register(videosRoutes(ctx));
  await app.register(tasksRoutes(ctx));
  await app.register(filesRoutes(ctx));
  await app.register(adminTasksRoutes(ctx));
  await app.register(adminCallsRoutes(ctx));
  await app.register(webhooksRoutes(ctx));
  await app.register(avatarsRoutes(ctx));
  await app.register(upstreamCallbacksRoutes(ctx, await fileSigningSecret(ctx.db, ctx.config.fileUrlSecret)));
  await app.register(nativeRoutes(ctx));
  await app.register(messagesRoutes(ctx));
  await app.register(chatRoutes(ctx));
  await app.register(responsesRoutes(ctx));
  await app.register(modelsRoutes(ctx));
  await app.register(sessionRoutes(ctx));
  await app.register(signupRoutes(ctx));
  await app.register(oidcRoutes(ctx));
  await app.register(consoleRoutes(ctx));
  await app.register(consoleRedeemRoutes(ctx));
  await app.register(consoleCallsRoutes(ctx));
  await app.register(consoleTopupsRoutes(ctx));
  await app.register(adminTopupsRoutes(ctx));
  await app.register(stripeWebhookRoutes(ctx));
  await app.register((pages) => registerConsolePages(pages, ctx));
  routes.check();
  return app;
}
