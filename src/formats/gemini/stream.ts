// Gemini streamGenerateContent (SSE of whole GenerateContentResponse chunks) to and from neutral events.
import { NO_USAGE, type UsageClasses } from '../../core/usage.ts';
import {
  argumentsComplete, argumentsObject, isObject, wrapOpaque,
  type Json, type OpaqueValue, type SseFrame, type StreamDecoder, type StreamEncoder, type TextStreamEvent,
} from '../../core/text/index.ts';
import { partIn, stopReasonIn, stopReasonOut, usageIn, usageOut } from './answer.ts';

export class GeminiStreamDecoder implements StreamDecoder {
  private started = false;
  private open?: { kind: 'text' | 'thinking'; index: number };
  private next = 0;
  private calls = 0;
  private hasCall = false;
  private usage: UsageClasses = { ...NO_USAGE };
  private finishReason?: unknown;
  private done = false;
  private id = '';

  private close(): TextStreamEvent[] {
    const o = this.open;
    this.open = undefined;
    return o ? [{ type: 'block_stop', index: o.index }] : [];
  }

  push(data: unknown): TextStreamEvent[] {
    if (!isObject(data)) return [];
    const out: TextStreamEvent[] = [];
    if (isObject(data.error)) {
      this.done = true;
      return [{ type: 'error', message: String(data.error.message ?? 'upstream error'), ...(typeof data.error.status === 'string' ? { code: data.error.status } : {}) }];
    }
    if (!this.started) {
      this.started = true;
      this.id = typeof data.responseId === 'string' ? data.responseId : '';
      out.push({ type: 'start', id: this.id, model: String(data.modelVersion ?? '') });
    }
    if (isObject(data.usageMetadata)) this.usage = usageIn(data.usageMetadata);
    const cand = Array.isArray(data.candidates) && isObject(data.candidates[0]) ? data.candidates[0] : {};
    const parts = isObject(cand.content) && Array.isArray(cand.content.parts) ? cand.content.parts : [];
    for (const raw of parts) {
      const p = partIn(raw, this.id, this.calls);
      if (!p) continue;
      // Gemini closes a stream with an empty text part next to the finish reason: nothing to show.
      if (p.type !== 'tool_call' && !p.text && !p.signature) continue;
      if (p.type === 'tool_call') {
        this.calls++;
        this.hasCall = true;
        const index = this.next++;
        out.push(...this.close(),
          { type: 'block_start', index, block: { type: 'tool_call', id: p.id, name: p.name, ...(p.signature ? { signature: p.signature } : {}) } },
          { type: 'arguments_delta', index, json: p.arguments },
          { type: 'block_stop', index });
        continue;
      }
      const kind = p.type;
      if (this.open?.kind !== kind) {
        out.push(...this.close());
        this.open = { kind, index: this.next++ };
        out.push({ type: 'block_start', index: this.open.index, block: { type: kind } });
      }
      const index = this.open.index;
      if (p.text) out.push(kind === 'text' ? { type: 'text_delta', index, text: p.text } : { type: 'thinking_delta', index, text: p.text });
      if (p.signature) out.push({ type: 'signature', index, signature: p.signature });
    }
    if (cand.finishReason) {
      this.finishReason = cand.finishReason;
      out.push(...this.finish());
    }
    return out;
  }

  private finish(): TextStreamEvent[] {
    if (this.done) return [];
    this.done = true;
    return [...this.close(), { type: 'finish', stopReason: stopReasonIn(this.finishReason, this.hasCall), usage: this.usage }];
  }

  /** The finish came with the finish reason; a stream that ends without one was cut, and no finish is made up. */
  end(): TextStreamEvent[] {
    return [];
  }
}

export class GeminiStreamEncoder implements StreamEncoder {
  private head = { responseId: '', modelVersion: '' };
  /** Calls are whole parts in Gemini: arguments wait for the end of their block. */
  private readonly calls = new Map<number, { id: string; name: string; args: string; signature?: OpaqueValue }>();
  private readonly kinds = new Map<number, 'text' | 'thinking'>();
  /** Calls whose arguments were cut off, kept for the finish to decide. */
  private readonly cut: Json[] = [];

  private chunk(parts: Json[], extra: Json = {}): SseFrame {
    return { data: JSON.stringify({ candidates: [{ content: { role: 'model', parts }, index: 0, ...extra.candidate as Json }], ...(extra.usageMetadata ? { usageMetadata: extra.usageMetadata } : {}), modelVersion: this.head.modelVersion, responseId: this.head.responseId }) };
  }

  push(ev: TextStreamEvent): SseFrame[] {
    switch (ev.type) {
      case 'start':
        this.head = { responseId: ev.id, modelVersion: ev.model };
        return [];
      case 'block_start':
        if (ev.block.type === 'tool_call') this.calls.set(ev.index, { id: ev.block.id, name: ev.block.name, args: '', signature: ev.block.signature });
        else this.kinds.set(ev.index, ev.block.type);
        return [];
      case 'text_delta':
        return [this.chunk([{ text: ev.text }])];
      case 'thinking_delta':
        return [this.chunk([{ text: ev.text, thought: true }])];
      case 'signature': {
        const call = this.calls.get(ev.index);
        if (call) {
          call.signature = ev.signature;
          return [];
        }
        const thought = this.kinds.get(ev.index) === 'thinking' ? { thought: true } : {};
        return [this.chunk([{ text: '', ...thought, thoughtSignature: wrapOpaque(ev.signature, 'gemini') }])];
      }
      case 'arguments_delta': {
        const call = this.calls.get(ev.index);
        if (call) call.args += ev.json;
        return [];
      }
      case 'block_stop': {
        const call = this.calls.get(ev.index);
        if (!call) return [];
        this.calls.delete(ev.index);
        const sig = call.signature ? { thoughtSignature: wrapOpaque(call.signature, 'gemini') } : {};
        const part = { functionCall: { id: call.id, name: call.name, args: argumentsObject(call.args) }, ...sig };
        // Arguments cut off: a call the finish decides (dropped on MAX_TOKENS, as Gemini never sends half a call).
        if (!argumentsComplete(call.args)) {
          this.cut.push(part);
          return [];
        }
        return [this.chunk([part])];
      }
      case 'finish': {
        const cut = this.cut.length > 0 && ev.stopReason !== 'max_tokens' ? [this.chunk(this.cut)] : [];
        return [...cut, this.chunk([{ text: '' }], { candidate: { finishReason: stopReasonOut(ev.stopReason) }, usageMetadata: usageOut(ev.usage) })];
      }
      case 'error':
        return [{ data: JSON.stringify({ error: { code: 500, message: ev.message, status: ev.code ?? 'INTERNAL' } }) }];
    }
  }
}
