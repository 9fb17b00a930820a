import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A strict local ModelArk asset library (the Volcengine/BytePlus OpenAPI of service `ark`, Version
// 2024-01-01): `POST /?Action=<A>&Version=2024-01-01`, JSON body, signed with HMAC-SHA256.
// Sources: the signing method (volcengine.com/docs/6369/67269 and the worked example
// volcengine.com/docs/6408/78948: CanonicalRequest of method, path, sorted RFC 3986 query, the
// lower-cased signed headers, the body's SHA-256; key = HMAC chain of date, region, service,
// "request") and volcengine-python-sdk volcenginesdkcore/signv4.py; the public error codes
// (volcengine.com/docs/6369/68677): MissingAuthenticationToken 401 (100003), MissingRequestInfo 400
// (100004), InvalidTimestamp 400 (100006), InvalidActionOrVersion 404 (100008), InvalidAccessKey 401
// (100009), SignatureDoesNotMatch 401 (100010), each as
// {ResponseMetadata: {RequestId, Action, Version, Service, Region, Error: {CodeN, Code, Message}}}.
// Actions (the asset-library API reference as mirrored at docs.agentsflare.com/api-examples/assets-api):
//   CreateAssetGroup {Name (<= 64, required), Description (<= 300), GroupType ("AIGC"), ProjectName} -> {Id}
//   CreateAsset {GroupId, URL, AssetType (Image|Video|Audio), Name (<= 64), ProjectName} -> {Id}
//   GetAsset {Id, ProjectName} -> {Id, Name, URL, AssetType, GroupId, ProjectName, Status
//     (Processing|Active|Failed), Error {Code, Message} when Failed, CreateTime, UpdateTime}
// The fake recomputes every signature from the request as received (its own code, not the
// gateway's signer) and refuses a wrong one. An asset whose URL or name carries [ark:reject] is
// Failed (ContentRestricted) after `processingMs`; others become Active. Each asset also answers
// Processing to its first `processingReads` reads (0 by default), however long those took to come.

export interface FakeAsset {
  Id: string;
  GroupId: string;
  URL: string;
  Name: string;
  AssetType: string;
  ProjectName: string;
  createdAt: number;
  /** GetAsset reads so far. */
  reads?: number;
}

export interface FakeArkAssets {
  url: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  groups: Map<string, { Id: string; Name: string; Description?: string; GroupType: string; ProjectName: string }>;
  assets: Map<string, FakeAsset>;
  /** Every call: its action and whether its signature held. */
  calls: { action: string; signed: boolean; body: any }[];
  processingMs: number;
  processingReads: number;
  close(): Promise<void>;
}

const VERSION = '2024-01-01';
const SERVICE = 'ark';
const ACTIONS = new Set(['CreateAssetGroup', 'CreateAsset', 'GetAsset']);
const FIELDS: Record<string, string[]> = {
  CreateAssetGroup: ['Name', 'Description', 'GroupType', 'ProjectName'],
  CreateAsset: ['GroupId', 'URL', 'AssetType', 'Name', 'ProjectName'],
  GetAsset: ['Id', 'ProjectName'],
};

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface ReceivedRequest {
  method: string;
  /** The raw request target, e.g. `/?Action=GetAsset&Version=2024-01-01`. */
  target: string;
  /** Header names as Node gives them (lower case). */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Why the request's signature fails (the public error code), or undefined when it holds. */
export function checkSignature(req: ReceivedRequest, keys: { accessKeyId: string; secretAccessKey: string; region: string }, now = Date.now()): { code: string; codeN: number; status: number; message: string } | undefined {
  const auth = String(req.headers.authorization ?? '');
  if (!auth) return { code: 'MissingAuthenticationToken', codeN: 100003, status: 401, message: 'Request is missing Authentication Token.' };
  const m = /^HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return { code: 'InvalidAuthorization', codeN: 100001, status: 400, message: "Invalid 'Authorization' header, Pls check authorization header." };
  const [, ak, day, region, service, signedList, signature] = m as unknown as string[];
  const date = String(req.headers['x-date'] ?? '');
  if (!/^\d{8}T\d{6}Z$/.test(date)) return { code: 'MissingRequestInfo', codeN: 100004, status: 400, message: 'The request is missing X-Date information.' };
  const at = Date.UTC(+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8), +date.slice(9, 11), +date.slice(11, 13), +date.slice(13, 15));
  if (Math.abs(now - at) > 15 * 60_000) return { code: 'InvalidTimestamp', codeN: 100006, status: 400, message: 'The Signature of the request is expired.' };
  if (ak !== keys.accessKeyId) return { code: 'InvalidAccessKey', codeN: 100009, status: 401, message: `The accesskey [${ak}] included in the request is invalid.` };
  const mismatch = { code: 'SignatureDoesNotMatch', codeN: 100010, status: 401, message: 'The request signature we calculated does not match the signature you provided. Check your Secret Access Key and signing method. Consult the service documentation for details.' };
  if (day !== date.slice(0, 8) || region !== keys.region || service !== SERVICE) return mismatch;
  const names = signedList!.split(';');
  // host and x-date must be signed; the body's hash, when sent, must be the body's.
  if (!names.includes('host') || !names.includes('x-date')) return mismatch;
  const bodyHash = sha256(req.body);
  if (req.headers['x-content-sha256'] !== undefined && req.headers['x-content-sha256'] !== bodyHash) return mismatch;
  const url = new URL(req.target, 'http://placeholder');
  const pairs = [...url.searchParams.entries()].map(([k, v]) => [rfc3986(k), rfc3986(v)] as const);
  // By name in ASCII order, then by value (the SDK sorts (name, value) pairs).
  pairs.sort(([ak, av], [bk, bv]) => (ak === bk ? (av < bv ? -1 : av > bv ? 1 : 0) : ak < bk ? -1 : 1));
  const query = pairs.map(([k, v]) => `${k}=${v}`).join('&');
  const canonicalHeaders = names.map((n) => `${n}:${String(req.headers[n] ?? '').trim()}\n`).join('');
  const canonical = [req.method, url.pathname || '/', query, canonicalHeaders, names.join(';'), bodyHash].join('\n');
  const scope = `${day}/${region}/${service}/request`;
  const toSign = ['HMAC-SHA256', date, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(keys.secretAccessKey, day!), region!), service!), 'request');
  const expected = createHmac('sha256', key).update(toSign, 'utf8').digest();
  if (!timingSafeEqual(expected, Buffer.from(signature!, 'hex'))) return mismatch;
  return undefined;
}

export async function startFakeArkAssets(options: { accessKeyId?: string; secretAccessKey?: string; region?: string; processingMs?: number; processingReads?: number } = {}): Promise<FakeArkAssets> {
  let seq = 0;
  const fake = {
    accessKeyId: options.accessKeyId ?? 'AKLTfakeaccesskey',
    secretAccessKey: options.secretAccessKey ?? 'fake-secret-access-key==',
    region: options.region ?? 'ap-southeast-1',
    groups: new Map(),
    assets: new Map(),
    calls: [],
    processingMs: options.processingMs ?? 100,
    processingReads: options.processingReads ?? 0,
  } as unknown as FakeArkAssets;
  const stamp = () => new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const newId = (kind: string) => `${kind}-${stamp()}-${(++seq).toString(36).padStart(5, '0')}`;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://placeholder');
      const action = url.searchParams.get('Action') ?? '';
      const meta = { RequestId: `req-${++seq}`, Action: action, Version: url.searchParams.get('Version') ?? '', Service: SERVICE, Region: fake.region };
      const fail = (status: number, Code: string, CodeN: number, Message: string) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ ResponseMetadata: { ...meta, Error: { CodeN, Code, Message } } }));
      const ok = (Result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ResponseMetadata: meta, Result }));
      const body = Buffer.concat(chunks);
      const problem = checkSignature({ method: req.method ?? '', target: req.url ?? '/', headers: req.headers, body }, fake);
      let parsed: any;
      try {
        parsed = JSON.parse(body.toString('utf8') || '{}');
      } catch {
        parsed = undefined;
      }
      fake.calls.push({ action, signed: !problem, body: parsed });
      if (problem) return fail(problem.status, problem.code, problem.codeN, problem.message);
      if (req.method !== 'POST' || url.pathname !== '/') return fail(404, 'InvalidActionOrVersion', 100008, `Could not find operation ${action} for version ${meta.Version}.`);
      if (!ACTIONS.has(action) || meta.Version !== VERSION) return fail(404, 'InvalidActionOrVersion', 100008, `Could not find operation ${action} for version ${meta.Version}.`);
      if (!String(req.headers['content-type']).startsWith('application/json')) return fail(400, 'InvalidParameter', 100001, 'Content-Type must be application/json');
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return fail(400, 'InvalidParameter', 100001, 'The request body is not a JSON object');
      const unknown = Object.keys(parsed).find((k) => !FIELDS[action]!.includes(k));
      if (unknown) return fail(400, 'InvalidParameter', 100001, `The parameter ${unknown} is not valid`);
      const text = (field: string, max: number, required: boolean) => {
        const v = parsed[field];
        if (v === undefined) return required ? `The request is missing ${field} parameter.` : undefined;
        return typeof v === 'string' && v.length >= 1 && [...v].length <= max ? undefined : `The parameter ${field} is not valid`;
      };
      const invalid = (message: string | undefined) => (message ? (fail(400, message.includes('missing') ? 'MissingParameter' : 'InvalidParameter', 100002, message), true) : false);
      if (invalid(text('ProjectName', 64, false))) return;
      if (parsed.ProjectName !== undefined && parsed.ProjectName !== 'default') return fail(404, 'NotFound.ProjectName', 100001, `The project ${parsed.ProjectName} was not found`);
      if (action === 'CreateAssetGroup') {
        if (invalid(text('Name', 64, true)) || invalid(text('Description', 300, false))) return;
        if (parsed.GroupType !== undefined && parsed.GroupType !== 'AIGC') return fail(400, 'InvalidParameter', 100001, 'The parameter GroupType is not valid');
        const Id = newId('group');
        fake.groups.set(Id, { Id, Name: parsed.Name, Description: parsed.Description, GroupType: parsed.GroupType ?? 'AIGC', ProjectName: parsed.ProjectName ?? 'default' });
        return ok({ Id });
      }
      if (action === 'CreateAsset') {
        if (invalid(text('GroupId', 200, true)) || invalid(text('URL', 4096, true)) || invalid(text('AssetType', 16, true)) || invalid(text('Name', 64, false))) return;
        if (!fake.groups.has(parsed.GroupId)) return fail(404, 'NotFound.GroupId', 100001, `The asset group ${parsed.GroupId} was not found`);
        if (!['Image', 'Video', 'Audio'].includes(parsed.AssetType)) return fail(400, 'InvalidParameter', 100001, 'The parameter AssetType is not valid');
        if (!/^https?:\/\//.test(parsed.URL)) return fail(400, 'InvalidParameter.URL', 100001, 'The parameter URL is not valid');
        const asset: FakeAsset = { Id: newId('asset'), GroupId: parsed.GroupId, URL: parsed.URL, Name: parsed.Name ?? '', AssetType: parsed.AssetType, ProjectName: parsed.ProjectName ?? 'default', createdAt: Date.now() };
        fake.assets.set(asset.Id, asset);
        return ok({ Id: asset.Id });
      }
      if (invalid(text('Id', 200, true))) return;
      const asset = fake.assets.get(parsed.Id);
      if (!asset) return fail(404, 'NotFound.Asset', 100001, `The asset ${parsed.Id} was not found`);
      asset.reads = (asset.reads ?? 0) + 1;
      const processing = Date.now() - asset.createdAt < fake.processingMs || asset.reads <= fake.processingReads;
      const rejected = `${asset.URL} ${asset.Name}`.includes('[ark:reject]');
      const Status = processing ? 'Processing' : rejected ? 'Failed' : 'Active';
      const time = new Date(asset.createdAt).toISOString();
      return ok({
        Id: asset.Id,
        Name: asset.Name,
        URL: asset.URL,
        AssetType: asset.AssetType,
        GroupId: asset.GroupId,
        ProjectName: asset.ProjectName,
        Status,
        ...(Status === 'Failed' ? { Error: { Code: 'ContentRestricted', Message: 'The asset did not pass review' } } : {}),
        CreateTime: time,
        UpdateTime: time,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
