import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.ts';

// Upstream callbacks (ModelArk's callback_url): our inbound URL carries a per-task token, an HMAC of
// the task id under the process-wide signing secret, so nothing is stored and no one who does not
// hold the secret can name a valid URL. A callback only makes the task's poll run now.

export const CALLBACK_PATH = '/upstream/callbacks';

const PRIVATE_HOST = /^(localhost|.*\.local|.*\.internal|127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|169\.254\.|\[?::1\]?|\[?f[cd])/i;

/** UPSTREAM_CALLBACKS: auto sends callback URLs only when PUBLIC_BASE_URL is a public https address. */
export function upstreamCallbacksOn(config: Pick<Config, 'publicBaseUrl' | 'upstreamTasks'>): boolean {
  const mode = config.upstreamTasks.callbacks;
  if (mode !== 'auto') return mode === 'on';
  const url = new URL(config.publicBaseUrl);
  return url.protocol === 'https:' && !PRIVATE_HOST.test(url.hostname);
}

export function callbackToken(secret: string, taskId: string): string {
  return createHmac('sha256', secret).update(`upstream-callback:${taskId}`).digest('base64url');
}

export function tokenMatches(secret: string, taskId: string, token: string): boolean {
  const expected = Buffer.from(callbackToken(secret, taskId));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The URL an upstream calls for a task, or undefined when upstream callbacks are off. */
export function callbackUrlMaker(config: Pick<Config, 'publicBaseUrl' | 'upstreamTasks'>, secret: string) {
  const on = upstreamCallbacksOn(config);
  return (taskId: string): string | undefined =>
    on ? `${config.publicBaseUrl}${CALLBACK_PATH}/${encodeURIComponent(taskId)}/${callbackToken(secret, taskId)}` : undefined;
}
