import { Redis } from 'ioredis';

/** Connects and waits until Redis answers, so a wrong REDIS_URL fails at start, not mid-request. */
export async function connectRedis(url: string, role: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectionName: `gateway-${role}`,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
  });
  redis.on('error', () => {
    // ioredis reconnects by itself; failed commands reach their callers as rejections.
  });
  await redis.connect();
  await redis.ping();
  return redis;
}
