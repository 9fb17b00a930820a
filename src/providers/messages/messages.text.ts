import type { FinishReason, TextChunk, TextRequest, TextResult } from '../../core/text/provider.ts';
import { laterUsage, usageOf, type ReportedUsage } from '../../lib/tokens/tokens.ts';
import { badGateway } from '../../core/errors.ts';
import { clientError } from '../text-refusal.ts';
import { sseData, UpstreamText } from '../upstream-http.ts';
import type { CallSignal } from '../../lib/call-signal.ts';
import type { Channel } from '../../core/channel.ts';
import { messagesClasses, messagesStartClasses, type MessagesAnswer, type MessagesEvent, type TextDelta } from './messages.answers.ts';
import { FINISH, forwardEvents } from './messages.events.ts';
import { openWireStream, wireGenerate, wireStream, type WireRoute } from '../wire-text.ts';
import { newId } from '../../lib/ids.ts';

const WIRE: WireRoute = { speaks: 'messages', path: () => '/v1/messages' };

// An upstream that speaks the messages format itself (POST /v1/messages), with the headers the
// vendor's API requires: the key in `x-api-key` and `anthropic-version: 2023-06-01`. The request goes
// through nearly unchanged; usage comes from message_start and message_delta. A messages caller's
// stream gets the upstream's events as bytes (messages.events.ts); others get them parsed.

export const API_VERSION = '2023-06-01';

function toMessages(request: TextRequest, stream: boolean) {
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    ...(request.system ? { system: request.system } : {}),
    messages: request.messages.map((m) => ({
      role: m.role,
      content: m.parts.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image', source: { type: 'base64', media_type: p.mediaType, data: p.data } })),
    })),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stopSequences?.length ? { stop_sequences: request.stopSequences } : {}),
    ...(stream ? { stream: true } : {}),
  };
}

export class MessagesText extends UpstreamText {
  constructor(channel: Channel, timeoutMs: number, extraHeaders: Record<string, string> = {}) {
    super(channel, timeoutMs, { ...extraHeaders, 'anthropic-version': API_VERSION, ...(channel.secret ? { 'x-api-key': channel.secret } : {}) });
  }

  readonly speaksWire = true;

  generate(request: TextRequest, signal: CallSignal): Promise<TextResult> {
    // A wire call's own promise, not one wrapped by an async function (each wrapper costs turns of the microtask queue).
    if (request.wire) return wireGenerate(this, WIRE, request, signal);
    return this.generateText(request, signal);
  }

  private async generateText(request: TextRequest, signal: CallSignal): Promise<TextResult> {
    const response = await this.postWhole('/v1/messages', toMessages(request, false), signal);
    if (response.statusCode >= 400) return clientError(response.statusCode, response);
    const json = response.json() as MessagesAnswer | null;
    const text = (json?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('');
    return {
      text,
      finish: FINISH[json?.stop_reason ?? ''] ?? 'stop',
      stopSequence: json?.stop_sequence ?? null,
      usage: usageOf(json?.usage ? messagesClasses(json.usage) : undefined, request, text),
    };
  }

  stream(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
    const wire = request.wire;
    // The generator that reads the stream is returned, not delegated to from one of this method's
    // own (each generator in the chain costs every chunk its own promises and turns).
    // Same format: the upstream's events go to the caller as bytes (messages.events.ts).
    if (wire?.format === 'messages') return forwardEvents(openWireStream(this, WIRE, request, signal), request, { id: newId('msg'), model: wire.model });
    if (wire) return wireStream(this, WIRE, request, signal);
    return this.streamText(request, signal);
  }

  private async *streamText(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
    const response = await this.post('/v1/messages', toMessages(request, true), signal);
    if (response.statusCode >= 400) return clientError(response.statusCode, response.body);
    let produced = '';
    let reported: ReportedUsage | undefined;
    let finish: FinishReason = 'stop';
    let stopSequence: string | null = null;
    for await (const data of sseData(response.body)) {
      const event: MessagesEvent = JSON.parse(data);
      if (event.type === 'error') throw badGateway(`upstream stream failed: ${String(event.error?.message ?? 'error')}`);
      if (event.type === 'message_start') {
        reported = laterUsage(reported, messagesStartClasses(event.message?.usage));
        yield { type: 'usage', usage: reported };
      }
      if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta') {
        const { text } = event.delta as TextDelta;
        produced += text;
        yield { type: 'delta', text };
      }
      if (event.type === 'message_delta') {
        finish = FINISH[event.delta?.stop_reason ?? ''] ?? 'stop';
        stopSequence = event.delta?.stop_sequence ?? null;
        reported = laterUsage(reported, messagesClasses(event.usage));
      }
    }
    yield { type: 'end', finish, stopSequence, usage: usageOf(reported, request, produced) };
  }
}
