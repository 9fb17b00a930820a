import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { checkAddress } from './address-rules.ts';
import type { Resolver } from './target.ts';

/**
 * An undici Agent whose every connection resolves the host itself, checks each address, and
 * connects only to an address that passed: a DNS answer that changes after the submit-time check
 * (rebinding) cannot reach an internal service. Redirects are never followed (undici's default).
 */
export function safeDispatcher(resolve: Resolver, allowPrivate: boolean, timeoutMs: number): Agent {
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const bad = addresses.map((a) => checkAddress(a, allowPrivate)).find((v) => !v.ok);
        if (bad && !bad.ok) return callback(Object.assign(new Error(`refused: ${bad.reason}`), { code: 'EREFUSED' }), '', 4);
        const address = addresses[0];
        if (!address) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
        const family = address.includes(':') ? 6 : 4;
        if ((options as { all?: boolean }).all) return (callback as any)(null, [{ address, family }]);
        callback(null, address, family);
      },
      (err) => callback(err, '', 4),
    );
  };
  return new Agent({ connect: { lookup, timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 4000 });
}
