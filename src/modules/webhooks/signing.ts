import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256
// of "id.timestamp.body">`, keyed with the base64 part of a `whsec_...` secret.

export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function signatureHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
