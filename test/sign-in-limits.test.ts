import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adminHeaders, awayFromRateWindowEdge, backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Console sign-in limits count wrong passwords, per client address, per (address, email) and per
// email. Many addresses guessing at one email must not lock its owner out: the right password from an
// address that has not failed for that email is always checked. With CONSOLE_SIGNIN_RPM=10:
// 10 failures a minute per address, 5 per (address, email), and once an email has had 10 failures
// this minute, an address that already failed for it gets no further try until the minute ends.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ CONSOLE_SIGNIN_RPM: '10' });
});
afterAll(() => t.close());
// Every test's attempts must fall in one fixed one-minute window.
beforeEach(() => awayFromRateWindowEdge(20_000), 25_000);

const PASSWORD = 'correct horse battery';
const WRONG = 'wrong password!!';
const freshAddress = () => `10.${[...randomBytes(3)].join('.')}`;

async function owner() {
  const account = await seedAccount(t.ctx, 1);
  const email = `owner-${randomBytes(4).toString('hex')}@example.com`;
  const set = await t.app.inject({ method: 'PUT', url: `/admin/users/${account.user.id}/console-credentials`, headers: adminHeaders, payload: { email, password: PASSWORD } });
  expect(set.statusCode).toBe(200);
  return { userId: account.user.id, email };
}

function signIn(email: string, password: string, remoteAddress: string) {
  return t.app.inject({ method: 'POST', url: '/console/api/session', payload: { email, password }, remoteAddress });
}

describe(`console sign-in limits [${backendName}]`, () => {
  it('30 wrong passwords for one email from many addresses do not lock the owner out', async () => {
    const { userId, email } = await owner();
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i++) statuses.add((await signIn(email, `${WRONG}${i}`, freshAddress())).statusCode);
    expect([...statuses]).toEqual([401]);
    const res = await signIn(email, PASSWORD, freshAddress());
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ role: 'account', user_id: userId });
  });

  it('one address gets 5 wrong passwords per email; then even the right one waits, but not from elsewhere', async () => {
    const { email } = await owner();
    const hammering = freshAddress();
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await signIn(email, WRONG, hammering)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const refused = await signIn(email, PASSWORD, hammering);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect((await signIn(email, PASSWORD, freshAddress())).statusCode).toBe(200);
  });

  it('one address gets 10 wrong passwords a minute across emails; refused tries do not add to it', async () => {
    const guesser = freshAddress();
    const target = `target-${randomBytes(4).toString('hex')}@example.com`;
    const statuses = [];
    // 5 failures at one email, then 3 tries refused by the (address, email) limit: 5 count, not 8.
    for (let i = 0; i < 8; i++) statuses.push((await signIn(target, WRONG, guesser)).statusCode);
    for (let i = 0; i < 7; i++) statuses.push((await signIn(`nobody-${randomBytes(4).toString('hex')}@example.com`, WRONG, guesser)).statusCode);
    expect(statuses).toEqual([...Array(5).fill(401), 429, 429, 429, ...Array(5).fill(401), 429, 429]);
    // The address is refused for every email, the owner's too, while the others are not.
    const { email } = await owner();
    expect((await signIn(email, PASSWORD, guesser)).statusCode).toBe(429);
    expect((await signIn(email, PASSWORD, freshAddress())).statusCode).toBe(200);
  });

  it('a right password does not count: the owner signing in again and again is never limited', async () => {
    const { email } = await owner();
    const home = freshAddress();
    const statuses = new Set<number>();
    for (let i = 0; i < 12; i++) statuses.add((await signIn(email, PASSWORD, home)).statusCode);
    expect([...statuses]).toEqual([200]);
  });

  it('once an email has had 10 failures, an address rotating through it gets one try, and the owner still gets in', async () => {
    const { email } = await owner();
    const attackers = Array.from({ length: 10 }, freshAddress);
    for (const address of attackers) expect((await signIn(email, WRONG, address)).statusCode).toBe(401);
    // Each attacker has failed once: under the pair limit of 5, but the email is now under attack.
    for (const address of attackers) expect((await signIn(email, WRONG, address)).statusCode).toBe(429);
    // A new address still gets its one check (and is then held like the others).
    const late = freshAddress();
    expect((await signIn(email, WRONG, late)).statusCode).toBe(401);
    expect((await signIn(email, WRONG, late)).statusCode).toBe(429);
    expect((await signIn(email, PASSWORD, freshAddress())).statusCode).toBe(200);
  });

  it('parallel wrong passwords from one address are held to the per-address limit', async () => {
    const { email } = await owner();
    const address = freshAddress();
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(i % 2 ? email : `x-${i}@example.com`, WRONG, address)));
    const checked = burst.filter((r) => r.statusCode === 401).length;
    expect(checked).toBeLessThanOrEqual(10);
    expect(burst.filter((r) => r.statusCode === 429).length).toBe(12 - checked);
  });
});
