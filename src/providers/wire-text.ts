import type { TextAnswer, TextStreamEvent, WireCall, WireFormat, Json } from '../core/text/index.ts';
import { FORWARDED_HEADERS } from '../core/text/index.ts';
import { FORMATS } from '../formats/index.ts';
import { callerFrames, encodeForCaller } from '../formats/caller.ts';
import type { CallSignal } from '../lib/call-signal.ts';
import type { FinishReason, TextChunk, TextRequest, TextResult } from '../core/text/provider.ts';
import { laterUsage, usageOf, type ReportedUsage } from '../lib/tokens/tokens.ts';
import { reportedUsage } from './wire-usage.ts';
import { forwardWire } from './wire-forward.ts';
import { clientError } from './text-refusal.ts';
import { badGateway } from '../core/errors.ts';
import { sseEvents, type UpstreamText } from './upstream-http.ts';
import type { OpenStream } from './upstream-stream.ts';

// A wire call (core/text/call.ts) on an upstream that speaks `speaks`. Same format: the caller's
// body goes as it came but the model, with its vendor headers, and the answer comes back as the
// upstream wrote it (a whole answer names the caller's model), stream event by stream event.
// Otherwise the neutral request is encoded for the upstream and its answer decoded and encoded
// again in the caller's format. Either way the upstream's answer is decoded for the usage.

/** How an upstream takes a format's calls: the path for this model, streamed or not, and its refusals. */
export interface WireRoute {
  speaks: WireFormat;
  path(model: string, stream: boolean): string;
  /** An answer >= 400 into our error (default: the upstream's message to the caller on 400/404/422). */
  refuse?(statusCode: number, body: { text(): string | Promise<string> }): Promise<never>;
}

const FINISH: Record<TextAnswer['stopReason'], FinishReason> = { end_turn: 'stop', refusal: 'stop', max_tokens: 'max_tokens', stop_sequence: 'stop_sequence', tool_use: 'tool_calls' };

/**
 * What goes upstream: the caller's own body (the model mapped) or the neutral request encoded. The
 * caller's bytes go as they came when nothing in them changes (Gemini names the model in the path).
 */
export function upstreamBody(wire: WireCall, speaks: WireFormat, model: string, stream: boolean): Json | Uint8Array {
  if (wire.format !== speaks || wire.rewritten) {
    // Copied only when the flag differs: a decoded request is a dictionary object, slow to spread.
    const request = Boolean(wire.request.stream) === stream ? wire.request : { ...wire.request, stream };
    return FORMATS[speaks].encodeRequest(request, model);
  }
  // The gateway bills from usage: a chat stream always asks for its usage chunk (a caller that did
  // not ask for it does not get it: see `withoutUnaskedUsage`).
  const askUsage = speaks === 'chat' && stream && (wire.body.stream_options as Json | undefined)?.include_usage !== true;
  if (wire.bytes && !askUsage && (speaks === 'gemini' || wire.body.model === model)) return wire.bytes;
  if (speaks === 'gemini') return wire.body;
  const body: Json = { ...wire.body, model };
  if (askUsage) body.stream_options = { ...(body.stream_options as Json | undefined), include_usage: true };
  return body;
}

export function vendorHeaders(wire: WireCall, speaks: WireFormat): Record<string, string> | undefined {
  if (wire.format !== speaks) return undefined;
  const out: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS[speaks]) if (wire.headers[name] !== undefined) out[name] = wire.headers[name]!;
  return out;
}

/** The text an answer produced (what our count bills when the upstream reports no usage). */
const producedText = (events: readonly TextStreamEvent[]) =>
  events.map((e) => (e.type === 'text_delta' || e.type === 'thinking_delta' ? e.text : e.type === 'arguments_delta' ? e.json : '')).join('');

const answerText = (answer: TextAnswer) => answer.content.map((p) => (p.type === 'text' || p.type === 'thinking' ? p.text : p.type === 'tool_call' ? p.arguments : '')).join('');

export function answerResult(answer: TextAnswer, wireBody: unknown): TextResult {
  return { text: answerText(answer), finish: FINISH[answer.stopReason], stopSequence: answer.stopSequence ?? null, usage: answer.usage, wireBody };
}

/** A whole answer: the same format's as it came (its usage read), or another format's translated. */
export async function wireGenerate(upstream: UpstreamText, route: WireRoute, request: TextRequest, signal: CallSignal): Promise<TextResult> {
  const wire = request.wire!;
  const { speaks, path } = route;
  const refuse = route.refuse ?? clientError;
  const response = await upstream.postWhole(path(request.model, false), upstreamBody(wire, speaks, request.model, false), signal, vendorHeaders(wire, speaks));
  if (response.statusCode >= 400) return refuse(response.statusCode, response);
  const json = response.json();
  if (wire.format === speaks && !wire.rewritten) {
    // Same format: the answer goes back as it came (naming the caller's model); only its usage is
    // read, and its text only when the upstream left a count out.
    const renamed = json !== null && typeof json === 'object' && 'model' in json && (json as Json).model !== wire.model;
    if (renamed) (json as Json).model = wire.model;
    const usage = usageOf(reportedUsage(speaks, json), request, () => answerText(FORMATS[speaks].decodeAnswer(json)));
    return { text: '', finish: 'stop', stopSequence: null, usage, wireBody: json, ...(renamed ? {} : { wireBytes: response.bytes() }) };
  }
  const decoded = FORMATS[speaks].decodeAnswer(json);
  const answer = { ...decoded, usage: usageOf(reportedUsage(speaks, json), request, answerText(decoded)) };
  return answerResult(answer, encodeForCaller(wire, answer));
}

/** Sends a wire call's streamed request (when called: inside the generator that reads the answer). */
export function openWireStream(upstream: UpstreamText, route: WireRoute, request: TextRequest, signal: CallSignal): OpenStream {
  const wire = request.wire!;
  const { speaks, path } = route;
  return async () => {
    const response = await upstream.post(path(request.model, true), upstreamBody(wire, speaks, request.model, true), signal, vendorHeaders(wire, speaks));
    if (response.statusCode >= 400) return (route.refuse ?? clientError)(response.statusCode, response.body);
    return response.body;
  };
}

/**
 * A wire call's stream: the generator that reads it is returned, not delegated to from one of
 * this function's own (each generator in the chain costs every chunk its own promises and turns).
 * Nothing is sent before the generator's first step.
 */
export function wireStream(upstream: UpstreamText, route: WireRoute, request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
  const wire = request.wire!;
  const { speaks } = route;
  const open = openWireStream(upstream, route, request, signal);
  // Same format: the upstream's events as it wrote them (messages streams: messages.events.ts).
  if (wire.format === speaks && !wire.rewritten && speaks !== 'messages') {
    const hideUsage = speaks === 'chat' && (wire.body.stream_options as Json | undefined)?.include_usage !== true;
    return forwardWire(speaks, open, request, hideUsage);
  }
  return translatedStream(open, speaks, request);
}

/** An upstream's stream in another format than the caller's: decoded, then encoded in the caller's. */
async function* translatedStream(open: OpenStream, speaks: WireFormat, request: TextRequest): AsyncGenerator<TextChunk> {
  const wire = request.wire!;
  const body = await open();
  const decoder = FORMATS[speaks].streamDecoder();
  const { frames: encode, broken } = callerFrames(wire);
  let end: Extract<TextStreamEvent, { type: 'finish' }> | undefined;
  let produced = '';
  let failure: Extract<TextStreamEvent, { type: 'error' }> | undefined;
  // What the upstream reported so far; a class it never reports is billed our count, not zero.
  let reported: ReportedUsage | undefined;
  const pass = (events: TextStreamEvent[]): TextChunk | undefined => {
    for (const e of events) if (e.type === 'finish') end = e;
    // The upstream's error ends the stream as on a same-format one (wire-forward.ts): the events
    // before it go out, then the text service bills the cut and logs the message without the
    // channel's credentials, and the route writes the gateway's own error event (the upstream's
    // message, which may echo them or name its internals, is not the caller's to read).
    const failed = events.findIndex((e) => e.type === 'error');
    if (failed >= 0) {
      failure = events[failed] as Extract<TextStreamEvent, { type: 'error' }>;
      events = events.slice(0, failed);
    }
    produced += producedText(events);
    const soFar = produced;
    const out = encode(events);
    return out ? { type: 'events', parts: [Buffer.from(out)], text: () => soFar, broken } : undefined;
  };
  for await (const event of sseEvents(body)) {
    const data = event.data === '[DONE]' ? '[DONE]' : (JSON.parse(event.data) as unknown);
    const now = reportedUsage(speaks, data);
    if (now) {
      reported = laterUsage(reported, now);
      // What the call pays if the stream breaks off before its end (the text service reads it).
      yield { type: 'usage', usage: reported };
    }
    const chunk = pass(decoder.push(data, event.event));
    if (chunk) yield chunk;
    if (failure) throw badGateway(`upstream stream failed: ${failure.message}`);
  }
  const chunk = pass(decoder.end());
  if (chunk) yield chunk;
  // Closed cleanly before its finish: as cut off as a broken connection (the caller gets the
  // gateway's error event, the text service bills what was sent and produced).
  if (!end) throw badGateway('upstream ended the stream before its finish');
  yield { type: 'end', finish: FINISH[end.stopReason], stopSequence: end.stopSequence ?? null, usage: usageOf(reported, request, produced) };
}
