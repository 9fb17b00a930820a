// Every call the console makes goes through here: the JSON routes documented in /openapi.json, the
// session cookie sent by the browser, and the CSRF token echoed on writes.

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';
export const setCsrfToken = (token: string) => {
  csrfToken = token;
};

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const text = await res.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new ApiFailure(res.status, data?.error?.message ?? `${res.status} ${res.statusText}`);
  return data as T;
}

export interface Session {
  role: 'account' | 'operator';
  user_id: string | null;
  csrf_token: string;
}

export interface Account {
  id: string;
  name: string;
  email: string | null;
  remain_balance: number;
  remain_credits: number;
  used_balance: number;
  used_credits: number;
}

export interface Key {
  id: string;
  name: string;
  prefix: string;
  status: string;
  unlimited: boolean;
  quota: number | null;
  quota_used: number;
  rate_limit_rpm: number | null;
  created_at: number;
}

export interface KeyUsage {
  key_id: string;
  name: string;
  status: string;
  text_calls: number;
  input_tokens: number;
  output_tokens: number;
  text_cost: number;
  tasks: number;
  task_cost: number;
}

export interface TaskRow {
  id: string;
  kind: string;
  model: string;
  status: string;
  created: number;
  cost: number | null;
  callback: string | null;
  images: string[];
  videos: string[];
  error: string | null;
}

export interface Attempt {
  round: number;
  attempt: number;
  url: string;
  at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  outcome: string;
}

export interface AdminUser {
  id: string;
  name: string;
  status: string;
  balance: number;
  used: number;
  created_at: number;
}

export interface Channel {
  id: string;
  name: string;
  type: string;
  base_url: string | null;
  models: string[];
  model_mapping: Record<string, string>;
  priority: number;
  weight: number;
  status: string;
}

export interface DayTotals {
  date: string;
  requests: number;
  spend: number;
  completed: number;
  failed: number;
}

export const money = (value: number) => value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });
export const when = (seconds: number) => new Date(seconds * 1000).toLocaleString();
