import type { Channel } from '../../core/channel.ts';
import { upstreamWhole } from '../upstream-client.ts';
import { ChannelRefused, UpstreamRejected } from '../../core/task-provider.ts';
import type { AssetAnswer, AssetResult } from './ark.answers.ts';
import { signRequest, type Credentials } from './ark.signing.ts';

// ModelArk's asset library is a Volcengine/BytePlus OpenAPI, not the data plane: every call is
// `POST <openapi_base_url>/?Action=<Action>&Version=2024-01-01` with a JSON body, signed with the
// channel's access keys (ark.signing.ts, service `ark`). Answers are
// {ResponseMetadata: {RequestId, Action, Version, Service, Region, Error?: {CodeN, Code, Message}}, Result}.
// Public error codes (volcengine.com/docs/6369/68677): SignatureDoesNotMatch and InvalidAccessKey
// are 401, AccessDenied 403, InternalError 500.

export const ASSETS_VERSION = '2024-01-01';
const DEFAULT_BASE_URL = 'https://open.byteplusapi.com';
const DEFAULT_REGION = 'ap-southeast-1';

export interface AssetLibrary {
  baseUrl: string;
  credentials: Credentials;
}

/** The channel's asset-library settings; a channel without its keys cannot review. */
export function assetLibrary(channel: Channel): AssetLibrary {
  const options = channel.options;
  const accessKeyId = typeof options.access_key_id === 'string' ? options.access_key_id : '';
  const secretAccessKey = typeof options.secret_access_key === 'string' ? options.secret_access_key : '';
  if (!accessKeyId || !secretAccessKey) {
    throw new ChannelRefused('upstream_error', 'The ark channel has no asset-library keys (options access_key_id and secret_access_key): it cannot review avatar assets');
  }
  const region = typeof options.region === 'string' && options.region ? options.region : DEFAULT_REGION;
  const baseUrl = typeof options.openapi_base_url === 'string' && options.openapi_base_url ? options.openapi_base_url : DEFAULT_BASE_URL;
  return { baseUrl, credentials: { accessKeyId, secretAccessKey, region, service: 'ark' } };
}

/** The library answered with an error: its HTTP status and code. */
export class AssetLibraryError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** One signed action; its `Result`, or an AssetLibraryError (or a network error) thrown. */
export async function assetsCall(library: AssetLibrary, action: string, body: Record<string, unknown>, timeoutMs: number): Promise<AssetResult> {
  const url = new URL(library.baseUrl.replace(/\/+$/, '') + '/');
  url.searchParams.set('Action', action);
  url.searchParams.set('Version', ASSETS_VERSION);
  const payload = JSON.stringify(body);
  const headers = signRequest(library.credentials, { method: 'POST', url, headers: { 'Content-Type': 'application/json' }, body: payload });
  const response = await upstreamWhole({ url, method: 'POST', headers, body: payload, timeoutMs });
  let json: AssetAnswer | null;
  try {
    json = JSON.parse(response.text());
  } catch {
    throw new AssetLibraryError(response.statusCode, '', `The asset library answered ${response.statusCode} with a body that is not JSON`);
  }
  const error = json?.ResponseMetadata?.Error;
  if (response.statusCode >= 300 || error) {
    const code = typeof error?.Code === 'string' ? error.Code : '';
    throw new AssetLibraryError(response.statusCode, code, `${action}: ${code || response.statusCode} ${typeof error?.Message === 'string' ? error.Message : ''}`.trim());
  }
  if (typeof json?.Result !== 'object' || json.Result === null) throw new AssetLibraryError(response.statusCode, '', `${action}: the answer has no Result`);
  return json.Result;
}

/**
 * What a failed call means: 5xx, 429 and unreadable answers may be retried (a plain error); refused
 * keys or signatures are the channel's problem (named without the key); other refusals are final.
 */
export function asReviewError(err: unknown): unknown {
  if (!(err instanceof AssetLibraryError)) return err;
  if (err.status >= 500 || err.status === 429 || err.code === '' || err.code === 'InternalError') return new Error(err.message);
  if (err.status === 401 || err.status === 403) {
    return new ChannelRefused('upstream_error', `The asset library refused the channel's access keys (${err.status} ${err.code}): the channel needs attention`);
  }
  return new UpstreamRejected('upstream_error', `The asset library refused the review (${err.code}): ${err.message}`);
}
