import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicReply, geminiReply, responsesReply, type Reply } from './agent-upstream-formats.ts';

// A real local server standing in for the three vendors' APIs, as the coding agents call them
// (test/agents.test.ts). It records every request and answers from a script: in 'tool' mode a
// request that offers the agent's shell tool and carries no tool result yet gets a call to that tool
// running `echo gw-tool-ok`; a request carrying a tool result gets text quoting that result.
// Anything else (plain mode, an agent's side requests without tools) gets plain text.

export const TOOL_WORD = 'gw-tool-ok';
export const PLAIN_ANSWER = 'gw-plain-answer';

export interface RecordedRequest {
  method: string;
  path: string; // with the query
  headers: http.IncomingHttpHeaders;
  body: any;
  /** What this server answered: 'text', 'tool' or 'other' (count_tokens, model lists). */
  answered: string;
}

export interface AgentUpstream {
  url: string; // http://127.0.0.1:port, no trailing slash
  requests: RecordedRequest[];
  /** Hosts an agent tried to reach through this server as its HTTP(S) proxy (refused): vendor traffic. */
  outbound: string[];
  mode: 'plain' | 'tool';
  /** When set, every model call is answered with this HTTP status and the vendor's error envelope. */
  failWith?: number;
  close(): Promise<void>;
}

/** The shell tools the agents offer (checked against each agent's first request in the tests). */
export const SHELL_TOOLS = ['Bash', 'shell', 'shell_command', 'exec_command', 'run_shell_command'];

export async function startAgentUpstream(mode: 'plain' | 'tool' = 'plain'): Promise<AgentUpstream> {
  const requests: RecordedRequest[] = [];
  const up: AgentUpstream = { url: '', requests, outbound: [], mode, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    if (/^https?:\/\//.test(req.url ?? '')) { // a plain-HTTP proxy request for some other host
      up.outbound.push(new URL(req.url!).host);
      res.writeHead(403).end();
      return;
    }
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = raw;
      try { body = raw ? JSON.parse(raw) : undefined; } catch { /* kept as text */ }
      const rec: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, answered: 'other' };
      requests.push(rec);
      const reply = answer(up, rec);
      rec.answered = reply.kind;
      res.writeHead(reply.status, { 'content-type': reply.contentType });
      res.end(reply.body);
    });
  });
  server.on('connect', (req: http.IncomingMessage, socket: import('node:net').Socket) => {
    up.outbound.push(req.url ?? '');
    socket.on('error', () => {}); // the agent may reset the tunnel it was refused
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  up.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return up;
}

function answer(up: AgentUpstream, rec: RecordedRequest): Reply {
  const mode = up.mode;
  const p = rec.path.split('?')[0]!;
  const body = rec.body ?? {};
  if (rec.method === 'GET' && /\/models\/?$/.test(p)) return json({ object: 'list', data: [], models: [] });
  if (p.endsWith('/v1/messages/count_tokens')) return json({ input_tokens: 10 });
  if (p.endsWith(':countTokens')) return json({ totalTokens: 10 });
  if (up.failWith && /\/v1\/messages$|\/responses$|:(stream)?[gG]enerateContent$/.test(p)) return failure(up.failWith, p);
  if (p.endsWith('/v1/messages')) return anthropicReply(decide(mode, anthropicTurn(body)), body.stream === true, body.model);
  if (p.endsWith('/responses')) return responsesReply(decide(mode, responsesTurn(body)), body.stream !== false, body.model);
  const g = /\/models\/([^/:]+):(streamGenerateContent|generateContent)$/.exec(p);
  if (g) return geminiReply(decide(mode, geminiTurn(body)), g[2] === 'streamGenerateContent', g[1]!);
  return { kind: 'other', status: 404, contentType: 'application/json', body: JSON.stringify({ error: { message: `no route ${p}` } }) };
}

export const FAILURE_MESSAGE = 'gw-upstream-refused';

/** Each vendor's error body: Anthropic {type:error,error:{type,message}}, OpenAI {error:{message,type,code}}, Google {error:{code,message,status}}. */
function failure(status: number, p: string): Reply {
  const body = p.endsWith('/v1/messages')
    ? { type: 'error', error: { type: status === 401 ? 'authentication_error' : 'invalid_request_error', message: FAILURE_MESSAGE } }
    : p.endsWith('/responses')
      ? { error: { message: FAILURE_MESSAGE, type: 'invalid_request_error', param: null, code: null } }
      : { error: { code: status, message: FAILURE_MESSAGE, status: status === 401 ? 'UNAUTHENTICATED' : 'INVALID_ARGUMENT' } };
  return { kind: 'other', status, contentType: 'application/json', body: JSON.stringify(body) };
}

function json(v: unknown): Reply {
  return { kind: 'other', status: 200, contentType: 'application/json', body: JSON.stringify(v) };
}

interface Turn { tools: string[]; toolResult?: string }
export type Decision = { text: string } | { tool: string; command: string };

function decide(mode: 'plain' | 'tool', turn: Turn): Decision {
  if (turn.toolResult !== undefined) return { text: `The tool printed: ${turn.toolResult.trim()}` };
  const tool = SHELL_TOOLS.find((t) => turn.tools.includes(t));
  if (mode === 'tool' && tool) return { tool, command: `echo ${TOOL_WORD}` };
  return { text: PLAIN_ANSWER };
}

const text = (v: unknown): string => typeof v === 'string' ? v : Array.isArray(v) ? v.map((x) => text(x?.text ?? x?.output ?? x)).join('') : JSON.stringify(v ?? '');

function anthropicTurn(body: any): Turn {
  const tools = (body.tools ?? []).map((t: any) => t.name);
  const last = body.messages?.at(-1);
  const result = Array.isArray(last?.content) ? last.content.find((b: any) => b.type === 'tool_result') : undefined;
  return { tools, toolResult: result ? text(result.content) : undefined };
}

function responsesTurn(body: any): Turn {
  const tools = (body.tools ?? []).map((t: any) => t.name ?? t.type);
  const input = Array.isArray(body.input) ? body.input : [];
  const last = input.at(-1);
  const isOut = last && /_call_output$/.test(last.type ?? '');
  return { tools, toolResult: isOut ? text(last.output) : undefined };
}

function geminiTurn(body: any): Turn {
  const tools = (body.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((f: any) => f.name));
  const last = body.contents?.at(-1);
  const fr = (last?.parts ?? []).find((p: any) => p.functionResponse)?.functionResponse;
  return { tools, toolResult: fr ? text(fr.response?.output ?? fr.response) : undefined };
}
