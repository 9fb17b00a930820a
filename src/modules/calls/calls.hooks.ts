import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { typeForStatus } from '../../core/errors.ts';
import { CallEntry, errorOf, GONE, type CallStatus, type CallSurface } from './call-entry.ts';
import type { CallLog } from './call-log.ts';
import type { CallRow } from './calls.repo.ts';

// Every route that declares a call surface (`config.callSurface`) gets a call log line: opened when
// the request arrives, closed when its socket's response closes (finished, or cut by the caller),
// queued once the text path has ended too. A request without an authenticated key (401, or no key
// at all) has no account to log it under and is left out.

declare module 'fastify' {
  interface FastifyRequest {
    callEntry?: CallEntry;
  }
  interface FastifyContextConfig {
    callSurface?: CallSurface;
  }
}

export function registerCallLog(app: Pick<FastifyInstance, 'addHook'>, log: CallLog): void {
  app.addHook('onRequest', (request, reply, done) => {
    const surface = request.routeOptions.config?.callSurface;
    if (surface) {
      const entry = new CallEntry(surface, () => {
        const row = rowOf(request, entry, closed);
        if (!row) return;
        if (entry.bodies) log.pushWithBodies(row, entry.bodies);
        else log.push(row);
      });
      let closed = { status: 0, finished: false, latency: 0 };
      request.callEntry = entry;
      // 'finish': the whole response was handed to the socket; a 'close' without it is a caller gone.
      // Each fires once per response: `on`, not `once` (whose wrapper and removal cost every call).
      let finished = false;
      reply.raw.on('finish', () => (finished = true));
      reply.raw.on('close', () => {
        closed = { status: reply.raw.statusCode, finished, latency: entry.elapsed() };
        entry.end();
      });
    }
    done();
  });
  app.addHook('onError', (request: FastifyRequest, _reply: FastifyReply, error: Error, done: () => void) => {
    if (request.callEntry) request.callEntry.facts.error ??= errorOf(error);
    done();
  });
}


function statusOf(outcome: CallEntry['facts']['outcome'], http: number, finished: boolean): CallStatus {
  if (outcome) return outcome;
  if (!finished) return 'aborted';
  return http < 400 ? 'ok' : http >= 500 ? 'failed' : 'refused';
}

function requestModel(request: FastifyRequest): string | null {
  const model = (request.body as { model?: unknown } | undefined)?.model;
  if (typeof model === 'string') return model;
  const target = (request.params as { '*'?: string } | undefined)?.['*'];
  if (!target) return null;
  const at = target.lastIndexOf(':');
  try {
    return decodeURIComponent(at > 0 ? target.slice(0, at) : target);
  } catch {
    return null;
  }
}

function rowOf(request: FastifyRequest, entry: CallEntry, closed: { status: number; finished: boolean; latency: number }): CallRow | undefined {
  const key = request.apiKey;
  if (!key || closed.status === 401) return undefined;
  const f = entry.facts;
  const status = statusOf(f.outcome, closed.status, closed.finished);
  return {
    id: request.id,
    time: entry.startedAt,
    user_id: key.user_id,
    key_id: key.id,
    model: f.model ?? requestModel(request),
    surface: entry.surface,
    channel_id: f.channel?.id ?? null,
    channel_name: f.channel?.name ?? null,
    channel_type: f.channel?.type ?? null,
    status,
    http_status: closed.status,
    error: status === 'ok' ? null : JSON.stringify(f.error ?? (status === 'aborted' ? GONE : { code: typeForStatus(closed.status), message: `HTTP ${closed.status}` })),
    latency_ms: closed.latency,
    first_token_ms: f.firstTokenMs ?? null,
    usage: f.usage ? JSON.stringify(f.usage) : null,
    cost: f.cost ? JSON.stringify(f.cost) : null,
    task_id: f.taskId ?? null,
    bodies: null,
  };
}
