import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ClientGone } from '../lib/call-signal.ts';
import { TextFormatError } from '../core/text/errors.ts';
import { isStoreUnavailable } from '../db/errors.ts';
import { declaredRoutes, type Family } from './route-table.ts';
import { ApiError, nativeStatus, notFound, payloadTooLarge, serviceUnavailable, typeForStatus, unknownField, unsupportedMediaType } from '../core/errors.ts';

// The one place where errors become response bodies. Each route declares its envelope's family
// (http/surface.ts): standard, native, messages (standard plus `"type":"error"`)
// or openai (standard plus the `param` the OpenAI SDK reads). Where no route is at hand, the path decides
// through the table of declared routes (route-table.ts).
export function envelopeBody(family: Family, error: ApiError): unknown {
  if (family === 'native') return { error: { code: error.status, message: error.message, status: nativeStatus(error.status) } };
  if (family === 'openai') return { error: { code: error.status, message: error.message, type: error.type, param: null } };
  const standard = { error: { code: error.status, message: error.message, type: error.type } };
  return family === 'messages' ? { type: 'error', ...standard } : standard;
}

/** The body of an error on `url` (with `method`, when known) that reached no route. */
export function errorBody(url: string, error: ApiError, method?: string): unknown {
  return envelopeBody(declaredRoutes.familyFor(method, url), error);
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  const declared = request.routeOptions.config.envelope;
  const family = declared === undefined || declared === 'of-path' ? declaredRoutes.familyFor(request.method, request.url) : declared;
  return reply.status(error.status).send(envelopeBody(family, error));
}

function toApiError(error: FastifyError, request: FastifyRequest, bodyLimit: number): ApiError | undefined {
  if (error instanceof ApiError) return error;
  // A text body that is not valid in its format, or asks what the upstream's format cannot express.
  if (error instanceof TextFormatError) return new ApiError(400, 'invalid_request_error', error.message);
  // `throw undefined` (or null) reaches us as is: reading a field of it would crash this handler.
  if (error === null || typeof error !== 'object') return undefined;
  if (error.validation) {
    const first = error.validation[0];
    if (error.validationContext === 'body' && first?.instancePath === '' && first.keyword === 'type') {
      return new ApiError(400, 'invalid_request_error', 'Request body must be a JSON object (content-type: application/json)');
    }
    if (first?.keyword === 'additionalProperties') {
      // ajv's message names no field: the caller must learn which one this request does not take.
      const field = [...first.instancePath.split('/').filter(Boolean), first.params.additionalProperty].join('.');
      return unknownField(field);
    }
    return new ApiError(400, 'invalid_request_error', validationMessage(error.validation, error.validationContext) ?? error.message.replace(/^body\//, ''));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // A route may take less than BODY_LIMIT_BYTES (the Stripe webhook, upstream callbacks): its own limit is the one passed.
      return payloadTooLarge(request.routeOptions.bodyLimit ?? bodyLimit);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'invalid_request_error', 'Malformed JSON in request body');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'invalid_request_error', 'Request body is empty but content-type is application/json');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // Fastify's message names no type; the caller's header does (capped: it is echoed back).
      return unsupportedMediaType(String(request.headers['content-type'] ?? '').slice(0, 100));
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return new ApiError(status, typeForStatus(status), error.message);
  return undefined;
}

type ValidationErrors = NonNullable<FastifyError['validation']>;

/**
 * A failed anyOf says so twice besides the branch that matters: a nullable field (`T | null`) that
 * got a bad number also failed "must be null" and "must match a schema in anyOf". Those two are
 * left out wherever another error names the same field; undefined when nothing was left out.
 */
function validationMessage(errors: ValidationErrors, context: string | undefined): string | undefined {
  const named = new Set(errors.filter((e) => e.keyword !== 'anyOf' && !(e.keyword === 'type' && e.params.type === 'null')).map((e) => e.instancePath));
  const kept = errors.filter((e) => !named.has(e.instancePath) || (e.keyword !== 'anyOf' && !(e.keyword === 'type' && e.params.type === 'null')));
  if (kept.length === errors.length) return undefined;
  const prefix = context === 'body' ? '' : (context ?? '');
  return kept.map((e) => `${prefix}${prefix ? e.instancePath : e.instancePath.replace(/^\//, '')} ${e.message}`.trim()).join(', ');
}

/** The route error handler; app.ts also hands it Fastify's pre-routing errors (`frameworkErrors`). */
export function errorHandler(bodyLimit: number) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const apiError = toApiError(error, request, bodyLimit);
    if (apiError) return sendError(request, reply, apiError);
    if (isStoreUnavailable(error)) {
      // An outage, not a bug: one line without a stack, and a 503 the caller may retry.
      request.log.warn({ reqId: request.id, url: request.url, err: (error as Error).message }, 'a backing store is unavailable');
      return sendError(request, reply, serviceUnavailable('The service is temporarily unavailable (a backing store does not answer): retry shortly'));
    }
    if (error instanceof ClientGone) {
      // Not a failure of ours: an information line, not an error with a stack. Nobody is left to
      // read the answer (499 is nginx's "client closed request").
      request.log.info({ reqId: request.id, method: request.method, url: request.url }, 'client left before the answer');
      return sendError(request, reply, new ApiError(499, 'invalid_request_error', error.message));
    }
    // A bug or an unexpected failure: log everything, tell the caller nothing but the request id.
    request.log.error({ err: error, reqId: request.id, method: request.method, url: request.url }, 'unhandled error');
    const hidden = new ApiError(500, 'server_error', `Internal server error (request id ${request.id})`);
    return sendError(request, reply, hidden);
  };
}

export function registerErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler(errorHandler(bodyLimit));
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, notFound(`No route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}

const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/1\.[01]\r?\n/;

/**
 * The request a refused one was, so its error comes in that route's envelope. The parser gives no
 * request object: a request timed out midway has a response (and so its request) on the socket;
 * a refused head starts the raw packet the parser stopped in, or its URL sits in the parser's buffer.
 */
function refusedRequest(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket): { method?: string; url: string } {
  const pending = (socket as { _httpMessage?: { req?: { method?: string; url?: string } } })._httpMessage?.req;
  if (pending?.url) return { method: pending.method, url: pending.url };
  const line = error.rawPacket ? REQUEST_LINE.exec(error.rawPacket.subarray(0, 2048).toString('latin1')) : undefined;
  if (line) return { method: line[1], url: line[2]! };
  return { url: (socket as { parser?: { _url?: string } }).parser?._url ?? '/' };
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (bad header line, headers over
 * the size limit, a client too slow to send its request) gets its route's envelope written on the
 * socket, where Fastify's default would write its own body.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message = { 408: 'Request timed out: the whole request must arrive within REQUEST_TIMEOUT_MS', 431: 'Request headers are too large' }[status as 408 | 431] ?? 'Malformed HTTP request';
  const refused = refusedRequest(error, socket);
  const body = JSON.stringify(errorBody(refused.url, new ApiError(status, typeForStatus(status), message), refused.method));
  // A response already under way cannot be replaced: the connection is only closed.
  const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && !answering) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
