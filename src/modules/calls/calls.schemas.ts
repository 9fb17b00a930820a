import { Type, type Static } from 'typebox';

// The call log as the API answers it: the operator's view (GET /admin/calls) and the account
// holder's (GET /console/api/calls, which never names a channel).

const Id = Type.String({ minLength: 1, maxLength: 100 });
const UnixSeconds = Type.String({ pattern: '^[0-9]{1,12}$', description: 'Unix seconds' });
const Status = Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('refused'), Type.Literal('aborted')]);

const filters = {
  key_id: Type.Optional(Id),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  status: Type.Optional(Status),
  from: Type.Optional({ ...UnixSeconds, description: 'Calls at or after this time (Unix seconds)' }),
  to: Type.Optional({ ...UnixSeconds, description: 'Calls before this time (Unix seconds)' }),
  limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: 'Rows per page, 1 to 500 (default 50)' })),
  after: Type.Optional(Type.String({ maxLength: 200, description: "The previous page's `next`" })),
};

export const AccountCallsQuery = Type.Object(filters, { additionalProperties: false });
export const AdminCallsQuery = Type.Object({ user_id: Type.Optional(Id), channel_id: Type.Optional(Id), ...filters }, { additionalProperties: false });
export type CallsQuery = Static<typeof AdminCallsQuery>;

const Tokens = Type.Integer({ minimum: 0 });
const Usage = Type.Object({ input: Tokens, cache_read: Tokens, cache_write: Tokens, output: Tokens }, { description: 'Tokens per class (text calls)' });
const Money = Type.Number({ description: 'In the billing unit' });
const Cost = Type.Object(
  { input: Type.Optional(Money), cache_read: Type.Optional(Money), cache_write: Type.Optional(Money), output: Type.Optional(Money), total: Money },
  { description: 'What the call was charged, per token class and in total (a task submit: what it held), in the billing unit' },
);
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const callFields = {
  id: Type.String({ description: "The request id (x-request-id); a caller's id sent again is filed under `<id>~<an id the gateway made>`" }),
  time: Type.String({ description: 'When the request arrived, ISO 8601' }),
  user_id: Type.String(),
  key_id: Type.String(),
  key_name: Nullable(Type.String()),
  model: Nullable(Type.String()),
  surface: Type.String({ description: 'messages, chat, responses, gemini, native, images, videos or avatars' }),
  status: Status,
  http_status: Type.Integer(),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  latency_ms: Type.Integer(),
  first_token_ms: Nullable(Type.Integer({ description: 'Streams: when the first token reached the gateway' })),
  usage: Nullable(Usage),
  cost: Nullable(Cost),
  task_id: Nullable(Type.String()),
  bodies: Type.Boolean({ description: 'The request and answer were stored (a key with log_bodies): GET …/calls/{id}/bodies' }),
};

export const AccountCall = Type.Object(callFields);
export const AdminCall = Type.Object({ ...callFields, channel: Nullable(Type.Object({ id: Type.String(), name: Type.String(), type: Type.String() })) });
export type AdminCallView = Static<typeof AdminCall>;

const Body = Type.Unknown({ description: 'JSON when the stored bytes parse as JSON, else the text (a stream: its events as sent); secrets redacted' });
export const CallBodies = Type.Object({
  request: Body,
  response: Body,
  truncated: Type.Boolean({ description: 'A body was cut at CALL_BODY_MAX_BYTES' }),
});
export type CallBodiesView = Static<typeof CallBodies>;

const Next = Nullable(Type.String({ description: 'Pass as `after` for the next page; null on the last' }));
export const AccountCalls = Type.Object({ data: Type.Array(AccountCall), next: Next });
export const AdminCalls = Type.Object({ data: Type.Array(AdminCall), next: Next });

/** A call's id: a caller's x-request-id is up to 128 characters, and a repeated one has a suffix. */
export const CallIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
