import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
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
        if (options.all) return callback(null, [{ address, family }]);
        callback(null, address, family);
      },
      (err) => callback(err, '', 4),
    );
  };
  // A host written as an address is never looked up, so the lookup above cannot see it: it is
  // checked here before the connection is made (a caller's http://127.0.0.1/ or metadata address).
  const connectChecked = buildConnector({ lookup, timeout: timeoutMs });
  const connect: buildConnector.connector = (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const verdict = checkAddress(host, allowPrivate);
      if (!verdict.ok) return callback(Object.assign(new Error(`refused: ${verdict.reason}`), { code: 'EREFUSED' }), null);
    }
    return connectChecked(options, callback);
  };
  return new Agent({ connect, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 4000 });
}
