import { getGlobalDispatcher } from 'undici';
import type { Channel } from '../../core/channel.ts';
import { requestWhole } from '../upstream-whole.ts';
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
  method: 'GET' | 'POST';
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

/**
 * The answer's JSON as it came (the caller names the shape it expects: ark.answers.ts), or the refusal
 * thrown (UpstreamRejected), or a plain Error for what may be retried elsewhere.
 */
export async function arkCall(call: ArkCall): Promise<unknown> {
  const base = new URL(call.channel.base_url ?? '');
  const basePath = base.pathname === '/' ? '' : base.pathname.replace(/\/+$/, '');
  const response = await requestWhole(
    getGlobalDispatcher(),
    {
      origin: base.origin,
      path: `${basePath}${call.path}`,
      method: call.method,
      headers: {
        authorization: `Bearer ${call.channel.secret ?? ''}`,
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
    },
    AbortSignal.timeout(call.timeoutMs + 1000),
  );
  if (response.statusCode === 429 || response.statusCode >= 500) throw new Error(`ModelArk answered ${response.statusCode}`);
  let json: { error?: ArkErrorBody } | null;
  try {
    json = JSON.parse(response.text());
  } catch {
    throw new Error(`ModelArk answered ${response.statusCode} with a body that is not JSON`);
  }
  if (response.statusCode >= 400) throw arkRefusal(response.statusCode, json?.error);
  return json;
}
