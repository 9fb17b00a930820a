import net, { BlockList } from 'node:net';
import type { CompiledPolicy } from '../../core/key.ts';
import { badRequest, forbidden } from '../../core/errors.ts';
import { resolveModel } from '../../core/catalog/models.ts';

// A key's policy: the models it may use, the client addresses it may come
// from and when it stops working. Stored as JSON columns; compiled once per cache entry into a Set
// and a BlockList, so the check on every call is a few comparisons.

/** As the API shows and takes it: empty lists mean no limit; expires_at in Unix seconds. */
export interface KeyPolicy {
  models: string[];
  allowed_ips: string[];
  expires_at: number | null;
}

export const NO_POLICY: KeyPolicy = { models: [], allowed_ips: [], expires_at: null };

/** The catalogue id of a model or alias; free-form (text) names are their own id. */
export const canonicalModel = (name: string) => resolveModel(name)?.id ?? name;

interface Cidr {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `a.b.c.d/nn`, an IPv6 CIDR, or a bare address (a single host). */
export function parseCidr(text: string): Cidr {
  const [address = '', prefixText, extra] = text.trim().split('/');
  const version = net.isIP(address);
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (version === 0 || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
    throw badRequest(`allowed_ips: "${text}" is not an IPv4 or IPv6 address or CIDR`);
  }
  return { network: address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Checks and normalizes what a write sends: aliases become ids, duplicates go, CIDRs are checked. */
export function normalizePolicy(input: Partial<KeyPolicy>, base: KeyPolicy): KeyPolicy {
  const models = input.models === undefined ? base.models : [...new Set(input.models.map((m) => canonicalModel(m.trim())))];
  if (models.some((m) => m === '')) throw badRequest('models: an empty model id');
  const allowed_ips = input.allowed_ips === undefined ? base.allowed_ips : [...new Set(input.allowed_ips.map((c) => c.trim()))];
  allowed_ips.forEach(parseCidr);
  const expires_at = input.expires_at === undefined ? base.expires_at : input.expires_at;
  return { models, allowed_ips, expires_at };
}

function contains(outer: Cidr, inner: Cidr): boolean {
  if (outer.family !== inner.family || inner.prefix < outer.prefix) return false;
  const list = new BlockList();
  list.addSubnet(outer.network, outer.prefix, outer.family);
  return list.check(inner.network, inner.family);
}

/**
 * An account holder's change must stay inside what the operator set (the ceiling): a subset of its
 * models, addresses inside its ranges, an expiry no later than its own. 403 naming the field.
 */
export function assertWithinCeiling(policy: KeyPolicy, ceiling: KeyPolicy | null): void {
  if (!ceiling) return;
  if (ceiling.models.length > 0) {
    const outside = policy.models.length === 0 ? ['(every model)'] : policy.models.filter((m) => !ceiling.models.includes(m));
    if (outside.length > 0) throw forbidden(`models: the operator limits this key to ${ceiling.models.join(', ')}; ${outside.join(', ')} is outside`);
  }
  if (ceiling.allowed_ips.length > 0) {
    const ranges = ceiling.allowed_ips.map(parseCidr);
    const outside = policy.allowed_ips.length === 0 ? ['(every address)'] : policy.allowed_ips.filter((c) => !ranges.some((r) => contains(r, parseCidr(c))));
    if (outside.length > 0) throw forbidden(`allowed_ips: the operator limits this key to ${ceiling.allowed_ips.join(', ')}; ${outside.join(', ')} is outside`);
  }
  if (ceiling.expires_at !== null && (policy.expires_at === null || policy.expires_at > ceiling.expires_at)) {
    throw forbidden(`expires_at: the operator set this key to expire at ${ceiling.expires_at}; it cannot be later`);
  }
}

const list = (json: string | null): string[] => (json ? (JSON.parse(json) as string[]) : []);

/** The policy stored in a key's row (expires_at is kept in ms, shown in seconds). */
export function policyOfRow(row: { models: string | null; allowed_ips: string | null; expires_at: number | null }): KeyPolicy {
  return { models: list(row.models), allowed_ips: list(row.allowed_ips), expires_at: row.expires_at === null ? null : Math.floor(Number(row.expires_at) / 1000) };
}

// The operator's ceiling (the policy_ceiling column) holds the policy the operator set, if any, and
// whether the operator disabled the key: a key the operator disabled only the operator enables.
type StoredCeiling = Partial<KeyPolicy> & { disabled_by_operator?: true };

const storedCeiling = (row: { policy_ceiling: string | null }): StoredCeiling => (row.policy_ceiling ? (JSON.parse(row.policy_ceiling) as StoredCeiling) : {});

export function ceilingOfRow(row: { policy_ceiling: string | null }): KeyPolicy | null {
  const stored = storedCeiling(row);
  return stored.models === undefined ? null : { models: stored.models, allowed_ips: stored.allowed_ips ?? [], expires_at: stored.expires_at ?? null };
}

export const disabledByOperator = (row: { policy_ceiling: string | null }): boolean => storedCeiling(row).disabled_by_operator === true;

/** The column's value for the operator's policy (null: none set) and disabled mark. */
export function ceilingColumn(policy: KeyPolicy | null, disabled: boolean): string | null {
  if (!policy && !disabled) return null;
  return JSON.stringify({ ...policy, ...(disabled ? { disabled_by_operator: true } : {}) });
}

/** The columns a policy is written to. */
export function policyColumns(policy: KeyPolicy) {
  return {
    models: policy.models.length ? JSON.stringify(policy.models) : null,
    allowed_ips: policy.allowed_ips.length ? JSON.stringify(policy.allowed_ips) : null,
    expires_at: policy.expires_at === null ? null : policy.expires_at * 1000,
  };
}

export function compilePolicy(policy: KeyPolicy): CompiledPolicy | undefined {
  if (policy.models.length === 0 && policy.allowed_ips.length === 0 && policy.expires_at === null) return undefined;
  const compiled: CompiledPolicy = {};
  if (policy.models.length) compiled.models = new Set(policy.models);
  if (policy.allowed_ips.length) {
    compiled.addresses = new BlockList();
    for (const cidr of policy.allowed_ips.map(parseCidr)) compiled.addresses.addSubnet(cidr.network, cidr.prefix, cidr.family);
  }
  if (policy.expires_at !== null) compiled.expiresAtMs = policy.expires_at * 1000;
  return compiled;
}

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** Whether a client address is inside the allowlist; an IPv4-mapped IPv6 address counts as its IPv4. */
export function addressAllowed(addresses: BlockList, ip: string): boolean {
  const v4 = MAPPED_V4.exec(ip)?.[1];
  if (v4) return addresses.check(v4, 'ipv4');
  const version = net.isIP(ip);
  return version !== 0 && addresses.check(ip, version === 4 ? 'ipv4' : 'ipv6');
}

/** Whether a key may use a model (an alias counts as its id). Also for listing models (GET /v1/models). */
export function modelAllowed(policy: CompiledPolicy | undefined, model: string): boolean {
  return !policy?.models || policy.models.has(model) || policy.models.has(canonicalModel(model));
}
