import { Redis } from 'ioredis';

/** `host:port` of a Redis URL, without its password: for messages. */
export function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || '127.0.0.1'}:${parsed.port || 6379}`;
  } catch {
    return 'an unparsable address';
  }
}

/**
 * Connects and waits until Redis answers, so a wrong REDIS_URL fails at start, not mid-request.
 * Once connected, a command sent while the connection is down fails at once (no offline queue):
 * the request answers 503 instead of waiting, and ioredis reconnects by itself.
 */
export async function connectRedis(url: string, role: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectionName: `gateway-${role}`,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 5000,
  });
  let lastError: Error | undefined;
  redis.on('error', (err: Error) => {
    // ioredis reconnects by itself; failed commands reach their callers as rejections.
    lastError = err;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    const reason = (lastError ?? (err as Error)).message;
    throw new Error(`REDIS_URL: cannot reach Redis at ${redisAddress(url)} (${reason})`);
  }
  return redis;
}
