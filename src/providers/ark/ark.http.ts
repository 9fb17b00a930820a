import type { Channel } from '../../core/channel.ts';
import { upstreamJson } from '../upstream-client.ts';
import { ChannelRefused, UpstreamRejected } from '../../core/task-provider.ts';
import type { ArkErrorBody } from './ark.answers.ts';

// One call to ModelArk's data plane (/api/v3/...): `Authorization: Bearer <API key>`, JSON both ways,
// errors as {error: {code, message, param, type}} (BytePlus ModelArk "Error codes", docs 1299023).
// What another channel might not have (connection errors, timeouts, 429, 5xx) is thrown as a plain
// Error: the upstream took nothing, so the task may go elsewhere. Every other refusal is final.

/** Content-safety refusals: InputTextSensitiveContentDetected, OutputImageSensitiveContentDetected, SensitiveContentDetected.*, *RiskDetection. */
export const isSensitiveCode = (code: unknown) => typeof code === 'string' && /SensitiveContent|RiskDetection/.test(code);

export interface ArkCall {
  channel: Channel;
  method: 'GET' | 'POST' | 'DELETE';
  /** After the base URL, e.g. `/api/v3/images/generations`. */
  path: string;
  body?: unknown;
  timeoutMs: number;
}

/** The answer to a refused call, as the task's ending or a thrown error. */
export function arkRefusal(status: number, error: ArkErrorBody | undefined): UpstreamRejected {
  const code = typeof error?.code === 'string' ? error.code : '';
  const message = typeof error?.message === 'string' ? error.message : `answered ${status}`;
  if (isSensitiveCode(code)) return new UpstreamRejected('content_policy_violation', `ModelArk's content safety refused the task (${code}): ${message}`);
  // Names the channel's problem, never the key.
  if (status === 401 || status === 403) return new ChannelRefused('upstream_error', `ModelArk refused the channel's API key (${status} ${code}): the channel needs attention`);
  return new UpstreamRejected('upstream_error', `ModelArk refused the task (${status} ${code}): ${message}`);
}

/** ModelArk answered an error: its HTTP status, code and message. */
export class ArkError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * One call to the data plane: the JSON of a 2xx answer as it came (the caller names the shape it
 * expects: ark.answers.ts), or an ArkError with what ModelArk said.
 */
export function arkRequest(channel: Channel, method: 'GET' | 'POST' | 'DELETE', path: string, timeoutMs: number, body?: unknown): Promise<unknown> {
  return upstreamJson(
    {
      url: channel.base_url ?? '',
      path,
      method,
      headers: { authorization: `Bearer ${channel.secret ?? ''}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs,
    },
    (status, json) => {
      const error = (json as { error?: ArkErrorBody } | undefined)?.error;
      return new ArkError(status, String(error?.code ?? ''), String(error?.message ?? `ModelArk answered ${status}`));
    },
  );
}

/**
 * What a failed call means for its task: what another channel might not have (connection errors,
 * timeouts, 429, 5xx, an unreadable answer) is thrown as it is, to be retried; a refusal ends the task.
 */
export function arkTaskError(err: unknown): unknown {
  if (!(err instanceof ArkError) || err.status >= 500 || err.status === 429 || err.status < 400) return err;
  return arkRefusal(err.status, { code: err.code, message: err.message });
}

/** A data-plane call for a task: its JSON, or the error its task meets (arkTaskError). */
export async function arkCall(call: ArkCall): Promise<unknown> {
  try {
    return await arkRequest(call.channel, call.method, call.path, call.timeoutMs, call.body);
  } catch (err) {
    throw arkTaskError(err);
  }
}
