import type { FastifyReply, FastifyRequest } from 'fastify';
import { FORWARDED_HEADERS, sseText, type Json, type TextRequest as NeutralRequest, type WireFormat } from '../../core/text/index.ts';
import type { StreamError } from '../../core/text/provider.ts';
import { FORMATS } from '../../formats/index.ts';
import type { AppContext } from '../../context.ts';
import type { ApiError } from '../../core/errors.ts';
import { clientGone, logStreamEnd, startSse } from '../../http/sse.ts';
import type { TextCall } from './text-call.ts';
import { generateText, streamText } from './text.service.ts';
import { wireView } from './wire-view.ts';

// A text call on one of the four wire surfaces, from the caller's body to its answer in the same
// format: decoded once into the neutral model (a body its format does not allow is a 400 naming
// the field), routed, held and billed by the text service, answered by the provider in the
// caller's format (whole, or as that format's events, forwarded as they come).

export interface WireSurfaceCall {
  format: WireFormat;
  body: Json;
  /** The model, where the format keeps it outside the body (Gemini's path); else body.model. */
  model?: string;
  /** Gemini says it in the path; the other formats in the body's `stream`. */
  stream?: boolean;
  endpoint: TextCall['endpoint'];
  allDown: () => ApiError;
  /** Changes the decoded request before it is sized and routed (true, or a Sticky: it was changed). */
  expand?(request: NeutralRequest): Promise<boolean | Sticky>;
  /** The whole answer as the surface sends it (our `/v1beta` wraps it in {code, data}). */
  wrap?(answer: unknown): unknown;
  /** Told of the whole answer, in the caller's format, before the caller has all of it. */
  answered?(answer: Json, call: TextCall): Promise<void>;
}

/** A channel whose upstream keeps what `expand` put in, to be sent the request as decoded before (TextCall.sticky). */
export interface Sticky {
  channelId: string;
  asSent: NeutralRequest;
}

/** The call, or its promise when the surface changes the request first (`expand`). */
export function wireTextCall(request: FastifyRequest, surface: WireSurfaceCall): TextCall | Promise<TextCall> {
  const neutral = FORMATS[surface.format].decodeRequest(surface.body, surface.model);
  if (surface.stream !== undefined) neutral.stream = surface.stream;
  if (!surface.expand) return callOf(request, surface, neutral, false);
  return surface.expand(neutral).then((expanded) => callOf(request, surface, neutral, expanded));
}

function callOf(request: FastifyRequest, surface: WireSurfaceCall, neutral: NeutralRequest, expanded: boolean | Sticky): TextCall {
  const rewritten = expanded !== false;
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS[surface.format]) {
    const value = request.headers[name];
    if (value !== undefined) headers[name] = String(value);
  }
  // The route's body as parsed (not a copy it changed): its bytes can go upstream as they came.
  const bytes = surface.body === request.body ? request.jsonBytes : undefined;
  const view = wireView({ format: surface.format, body: surface.body, ...(bytes ? { bytes } : {}), request: neutral, model: surface.model ?? neutral.model, headers, ...(rewritten ? { rewritten } : {}) });
  const call: TextCall = { key: request.apiKey!, endpoint: surface.endpoint, requestId: request.id, request: view, allDown: surface.allDown, log: request.callEntry, span: request.span };
  if (typeof expanded === 'object') {
    const { rewritten: _, ...asSent } = view.wire!;
    call.sticky = { channelId: expanded.channelId, wire: { ...asSent, request: expanded.asSent } };
  }
  return call;
}

/** Answers the call: the whole answer as JSON, or the format's event stream. */
export async function answerWire(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, surface: WireSurfaceCall): Promise<unknown> {
  const made = wireTextCall(request, surface);
  const call = made instanceof Promise ? await made : made;
  if (call.request.wire!.request.stream) return streamWire(ctx, call, request, reply, surface);
  const result = await generateText(ctx, call, clientGone(reply));
  if (surface.answered) await surface.answered(result.wireBody as Json, call);
  // Sent as text (or as the upstream's own bytes): the answer is the upstream's to shape, not a schema's to filter.
  const answer = surface.wrap ? JSON.stringify(surface.wrap(result.wireBody)) : (result.wireBytes ?? JSON.stringify(result.wireBody));
  return reply.type('application/json; charset=utf-8').send(answer);
}

async function streamWire(ctx: AppContext, call: TextCall, request: FastifyRequest, reply: FastifyReply, surface: WireSurfaceCall) {
  const whole = surface.answered ? lastResponse() : undefined;
  // Listening from the start: a caller gone before the first event stops the upstream call too.
  const signal = clientGone(reply);
  const chunks = streamText(ctx, call, signal);
  // Routing, the hold and the upstream's first answer come before the first byte: their errors
  // still get a status code and the error envelope.
  const first = await chunks.next();
  const events = startSse(request, reply, signal, ctx.config.http.streamStallMs);
  // How the stream ends if it breaks off, as the last events chunk says (TextChunk `broken`).
  let broken: ((error: StreamError) => string) | undefined;
  try {
    for (let step = first; !step.done; step = await chunks.next()) {
      const chunk = step.value;
      // A caller that has not taken the last write yet holds the upstream read back (sse.ts).
      if (chunk.type !== 'events') continue;
      broken = chunk.broken ?? broken;
      // A forwarded Responses stream says where its answer is; others are read for it.
      if (chunk.answer !== undefined) whole?.said(chunk.answer as Json | null);
      else whole?.read(chunk.parts);
      if (!events.write(chunk.parts)) await events.drained();
    }
    const answer = whole?.answer();
    if (answer) await surface.answered!(answer, call);
  } catch (err) {
    logStreamEnd(request, err);
    const interrupted: StreamError = { type: 'error', message: 'The stream was interrupted', code: 'bad_gateway' };
    const closing = broken ? broken(interrupted) : sseText(FORMATS[call.request.wire!.format].streamEncoder(call.request.wire!.request).push(interrupted));
    events.write([Buffer.from(closing)]);
  } finally {
    events.end();
  }
  return reply;
}

/**
 * The whole answer of a Responses stream: the Response object its last event carries
 * (response.completed or response.incomplete). Only events that can be it are parsed.
 */
const COMPLETED = Buffer.from('"response.completed"');
const INCOMPLETE = Buffer.from('"response.incomplete"');

function lastResponse() {
  let found: Json | undefined;
  return {
    read(parts: Buffer[]) {
      for (const part of parts) {
        if (!part.includes(COMPLETED) && !part.includes(INCOMPLETE)) continue;
        for (const line of part.toString('utf8').split('\n')) {
          if (!line.startsWith('data: ')) continue;
          const data = JSON.parse(line.slice(6)) as Json;
          if ((data.type === 'response.completed' || data.type === 'response.incomplete') && data.response && typeof data.response === 'object') found = data.response as Json;
        }
      }
    },
    said(answer: Json | null) {
      if (answer) found = answer;
    },
    answer: () => found,
  };
}
