import net, { BlockList } from 'node:net';

// A callback goes only to a public unicast address. Every address a host resolves to is
// checked, and the connection is then made to a checked address (see safe-dispatcher.ts), so a DNS
// answer that changes between the check and the connection cannot reach an internal service.

const blockedV4 = new BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, including the cloud metadata address 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  blockedV4.addSubnet(net4, prefix, 'ipv4');
}

// The ranges the private-address widening (tests, private deployments) lets through.
const privateV4 = new BlockList();
for (const [net4, prefix] of [
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  privateV4.addSubnet(net4, prefix, 'ipv4');
}

const globalUnicastV6 = new BlockList();
globalUnicastV6.addSubnet('2000::', 3, 'ipv6');
const blockedV6 = new BlockList();
blockedV6.addSubnet('2001:db8::', 32, 'ipv6'); // documentation
blockedV6.addSubnet('2001::', 23, 'ipv6'); // IETF protocol assignments (Teredo, ORCHID, ...)
blockedV6.addSubnet('2002::', 16, 'ipv6'); // 6to4: an IPv4 address in disguise

/** Expands an IPv6 text form to its 8 groups of 16 bits. */
function groups(v6: string): number[] {
  const [head, tail] = v6.split('::');
  const parse = (part: string | undefined) => {
    if (!part) return [];
    return part.split(':').flatMap((g) => {
      if (g.includes('.')) {
        const [a, b, c, d] = g.split('.').map(Number);
        return [(a! << 8) | b!, (c! << 8) | d!];
      }
      return [parseInt(g, 16)];
    });
  };
  const left = parse(head);
  const right = parse(tail);
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

/** The IPv4 address embedded in an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) address. */
function embeddedV4(v6: string): string | undefined {
  const g = groups(v6.toLowerCase());
  if (g.length !== 8) return undefined;
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  const compat = g.slice(0, 6).every((x) => x === 0); // deprecated IPv4-compatible, and :: / ::1
  if (!mapped && !nat64 && !compat) return undefined;
  return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.');
}

export type AddressVerdict = { ok: true } | { ok: false; reason: string };

/** Whether one resolved address may receive a callback. */
export function checkAddress(address: string, allowPrivate = false): AddressVerdict {
  const family = net.isIP(address);
  if (family === 4) {
    if (allowPrivate && privateV4.check(address, 'ipv4')) return { ok: true };
    return blockedV4.check(address, 'ipv4') ? { ok: false, reason: `${address} is not a public address` } : { ok: true };
  }
  if (family === 6) {
    const v4 = embeddedV4(address);
    if (v4 !== undefined) {
      const loopback = groups(address).every((x, i) => (i < 7 ? x === 0 : x === 1));
      if (loopback) return allowPrivate ? { ok: true } : { ok: false, reason: `${address} is the loopback address` };
      const inner = checkAddress(v4, allowPrivate);
      return inner.ok ? inner : { ok: false, reason: `${address} embeds ${v4}, which is not a public address` };
    }
    if (!globalUnicastV6.check(address, 'ipv6') || blockedV6.check(address, 'ipv6')) {
      return { ok: false, reason: `${address} is not a public unicast IPv6 address` };
    }
    return { ok: true };
  }
  return { ok: false, reason: `${address} is not an IP address` };
}
