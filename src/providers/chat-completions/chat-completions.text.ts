import { badGateway } from '../../core/errors.ts';
import { ConversationNotKept, type FinishReason, type TextChunk, type TextRequest, type TextResult } from '../../core/text/provider.ts';
import { usageOf, type ReportedUsage } from '../../lib/tokens/tokens.ts';
import { sseData, UpstreamText } from '../upstream-http.ts';
import { clientError, refusalOf } from '../text-refusal.ts';
import type { CallSignal } from '../../lib/call-signal.ts';
import type { Channel } from '../../core/channel.ts';
import { wireGenerate, wireStream, type WireRoute } from '../wire-text.ts';
import { chatClasses, type ChatChunk, type ChatCompletion } from './chat-completions.answers.ts';

// The chat-completions protocol, the most common upstream: requests, responses, errors and streams
// are translated both ways. The channel's secret goes upstream and nowhere else.

/** The native surface's text-only request (wire calls go through wire-text.ts). */
function toChat(request: TextRequest, stream: boolean) {
  const messages: unknown[] = request.system ? [{ role: 'system', content: request.system }] : [];
  for (const message of request.messages) {
    const onlyText = message.parts.every((p) => p.type === 'text');
    messages.push({
      role: message.role,
      content: onlyText
        ? message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')
        : message.parts.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image_url', image_url: { url: `data:${p.mediaType};base64,${p.data}` } })),
    });
  }
  return {
    model: request.model,
    messages,
    max_tokens: request.maxTokens,
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stopSequences?.length ? { stop: request.stopSequences } : {}),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

const finishOf = (reason: unknown): FinishReason => (reason === 'length' ? 'max_tokens' : reason === 'tool_calls' ? 'tool_calls' : 'stop');

const CHAT: WireRoute = { speaks: 'chat', path: () => '/v1/chat/completions' };
/**
 * A follow-up naming a response the upstream no longer keeps (expired, or the channel's key moved
 * to another organisation) is passed on to the next route, which sends the conversation the
 * gateway kept: the caller's id is still good with us.
 */
async function refuseResponses(statusCode: number, body: { text(): string | Promise<string> }): Promise<never> {
  const text = await body.text();
  if ((statusCode === 400 || statusCode === 404) && refusalOf(text)?.code === 'previous_response_not_found') {
    throw new ConversationNotKept('the upstream no longer keeps the previous response');
  }
  return clientError(statusCode, { text: () => text });
}

const RESPONSES: WireRoute = { speaks: 'responses', path: () => '/v1/responses', refuse: refuseResponses };

export class ChatCompletionsText extends UpstreamText {
  readonly speaksWire = true;

  /** Responses calls go to the upstream's own /v1/responses only where it has one (the `openai` type). */
  protected readonly takesResponses: boolean = false;

  private wireRoute(request: TextRequest): WireRoute {
    return request.wire?.format === 'responses' && this.takesResponses ? RESPONSES : CHAT;
  }

  /** The upstream's /v1/responses stores an answer unless told `store: false`; only a body sent as it came can name one of its ids. */
  keepsConversation(request: TextRequest): boolean {
    const wire = request.wire;
    return this.takesResponses && wire?.format === 'responses' && !wire.rewritten && wire.body.store !== false;
  }

  constructor(channel: Channel, timeoutMs: number, extraHeaders: Record<string, string> = {}) {
    super(channel, timeoutMs, { ...extraHeaders, ...(channel.secret ? { authorization: `Bearer ${channel.secret}` } : {}) });
  }

  generate(request: TextRequest, signal: CallSignal): Promise<TextResult> {
    // A wire call's own promise, not one wrapped by an async function (each wrapper costs turns of the microtask queue).
    if (request.wire) return wireGenerate(this, this.wireRoute(request), request, signal);
    return this.generateText(request, signal);
  }

  private async generateText(request: TextRequest, signal: CallSignal): Promise<TextResult> {
    const response = await this.postWhole('/v1/chat/completions', toChat(request, false), signal);
    if (response.statusCode >= 400) return clientError(response.statusCode, response);
    const json = response.json() as ChatCompletion | null;
    const choice = json?.choices?.[0];
    const text = typeof choice?.message?.content === 'string' ? choice.message.content : '';
    return {
      text,
      finish: finishOf(choice?.finish_reason),
      stopSequence: null,
      usage: usageOf(json?.usage ? chatClasses(json.usage) : undefined, request, text),
    };
  }

  stream(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
    // wireStream's own generator, not one delegating to it (as generate does with its promise).
    if (request.wire) return wireStream(this, this.wireRoute(request), request, signal);
    return this.streamText(request, signal);
  }

  private async *streamText(request: TextRequest, signal: CallSignal): AsyncIterable<TextChunk> {
    const response = await this.post('/v1/chat/completions', toChat(request, true), signal);
    if (response.statusCode >= 400) return clientError(response.statusCode, response.body);
    let produced = '';
    let finish: FinishReason = 'stop';
    let usage: ReportedUsage | undefined;
    for await (const data of sseData(response.body)) {
      if (data === '[DONE]') break;
      const json: ChatChunk | null = JSON.parse(data);
      const choice = json?.choices?.[0];
      const delta = choice?.delta?.content;
      if (typeof delta === 'string' && delta !== '') {
        produced += delta;
        yield { type: 'delta', text: delta };
      }
      if (choice?.finish_reason) finish = finishOf(choice.finish_reason);
      if (json?.error) throw badGateway(`upstream stream failed: ${String(json.error.message ?? 'error')}`);
      if (json?.usage) usage = chatClasses(json.usage);
    }
    // A count the upstream left out (or sent as something else than a count) is ours.
    yield { type: 'end', finish, stopSequence: null, usage: usageOf(usage, request, produced) };
  }
}
