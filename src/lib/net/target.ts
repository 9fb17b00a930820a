import type { TargetRules } from '../../core/provider-settings.ts';
import dns from 'node:dns';
import net from 'node:net';
import { checkAddress } from './address-rules.ts';

// Where a callback goes, and whether it may go there at all.

export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** `{base}/callback`; a trailing slash on the base is ignored. */
export function callbackUrl(base: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/callback`;
  return url.toString();
}

export type TargetVerdict = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

type Rules = TargetRules;

/** Every rule that needs no DNS: scheme, credentials, port, our own host. */
export function checkUrl(url: URL, rules: Rules): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol} is not http or https`;
  if (url.username || url.password) return 'user info is not allowed';
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (rules.webhook.ports !== '*' && !rules.webhook.ports.includes(port)) return `port ${port} is not allowed`;
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const own = [new URL(rules.publicBaseUrl).hostname.toLowerCase(), ...rules.webhook.ownHosts];
  if (own.includes(host)) return `${host} is this service`;
  return undefined;
}

/** Checks a callback target, resolving its host and checking every address it resolves to. */
export async function checkTarget(target: string, rules: Rules, resolve: Resolver = systemResolver): Promise<TargetVerdict> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  const problem = checkUrl(url, rules);
  if (problem) return { ok: false, reason: problem };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = net.isIP(host) ? [host] : await resolve(host);
  } catch (err) {
    return { ok: false, reason: `${host} does not resolve: ${err instanceof Error ? err.message : err}` };
  }
  if (addresses.length === 0) return { ok: false, reason: `${host} has no address` };
  for (const address of addresses) {
    const verdict = checkAddress(address, rules.webhook.allowPrivate);
    if (!verdict.ok) return { ok: false, reason: verdict.reason };
  }
  return { ok: true, url, addresses };
}
