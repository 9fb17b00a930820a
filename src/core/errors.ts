// Every error a caller can see is built here. The handler (http/error-handler.ts) turns an ApiError into
// the envelope of the route's family; its `code` always equals the HTTP status.

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'payment_required'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'server_error'
  | 'bad_gateway'
  | 'service_unavailable';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string) => new ApiError(400, 'invalid_request_error', message);
/** A field the request does not document: named, so a misspelling is found rather than defaulted. */
export const unknownField = (field: string) => badRequest(`Unknown field "${field}": this request takes only its documented fields`);
export const unauthorized = (message = 'Invalid or missing API key') =>
  new ApiError(401, 'authentication_error', message);
export const paymentRequired = (message = 'Insufficient balance') => new ApiError(402, 'payment_required', message);
export const forbidden = (message = 'Access forbidden') => new ApiError(403, 'permission_error', message);
export const notFound = (message = 'Not found') => new ApiError(404, 'not_found_error', message);
export const payloadTooLarge = (limit: number) =>
  new ApiError(413, 'request_too_large', `Request body is larger than the limit of ${limit} bytes`);
export const unsupportedMediaType = (type: string) =>
  new ApiError(415, 'invalid_request_error', `Unsupported content type "${type}": send application/json`);
export const rangeNotSatisfiable = (size: number) =>
  new ApiError(416, 'invalid_request_error', `The requested range is outside the file's ${size} bytes`, { 'content-range': `bytes */${size}` });
export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError(429, 'rate_limit_error', `Too many requests: retry after ${retryAfterSeconds} s`, {
    'retry-after': String(retryAfterSeconds),
  });
export const serverError = (message = 'Internal server error') => new ApiError(500, 'server_error', message);
export const badGateway = (message = 'Upstream error') => new ApiError(502, 'bad_gateway', message);
export const serviceUnavailable = (message = 'Upstream temporarily unavailable') =>
  new ApiError(503, 'service_unavailable', message);

const TYPE_BY_STATUS: Record<number, ErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'payment_required',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'server_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
};

export function typeForStatus(status: number): ErrorType {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
}

// Status strings of the native text envelope.
const NATIVE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'PAYMENT_REQUIRED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'BAD_GATEWAY',
  503: 'UNAVAILABLE',
};

export function nativeStatus(status: number): string {
  return NATIVE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');
}
