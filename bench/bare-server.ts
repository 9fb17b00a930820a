import Fastify from 'fastify';

// The yardstick: a bare Fastify route answering a body of the balance route's size.
const app = Fastify({ logger: false });
const body = { success: true, remain_balance: -1, remain_credits: -1, used_balance: 0, used_credits: 0, unlimited_quota: true };
app.get('/bare', async () => body);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('ready');
