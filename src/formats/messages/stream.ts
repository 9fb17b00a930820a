// The messages API stream (message_start .. message_stop) to and from neutral stream events.
import { NO_USAGE, type UsageClasses } from '../../core/usage.ts';
import {
  isObject, unwrapOpaque, wrapOpaque,
  type Json, type SseFrame, type StopReason, type StreamDecoder, type StreamEncoder, type TextStreamEvent,
} from '../../core/text/index.ts';
import { stopReasonIn, usageIn, usageOut } from './answer.ts';

export class MessagesStreamDecoder implements StreamDecoder {
  /** Vendor block index -> neutral index; server-tool blocks are skipped. */
  private readonly index = new Map<number, number>();
  /** Every vendor index a content_block_start named, skipped ones included. */
  private readonly opened = new Set<number>();
  private next = 0;
  private usage: UsageClasses = { ...NO_USAGE };
  private stop: StopReason = 'end_turn';
  private stopSequence?: string;
  private finished = false;

  push(data: unknown): TextStreamEvent[] {
    if (!isObject(data)) return [];
    switch (data.type) {
      case 'message_start': {
        const m = isObject(data.message) ? data.message : {};
        this.usage = usageIn(m.usage);
        return [{ type: 'start', id: String(m.id ?? ''), model: String(m.model ?? '') }];
      }
      case 'content_block_start': {
        const b = isObject(data.content_block) ? data.content_block : {};
        this.opened.add(Number(data.index));
        const at = this.next;
        const start = (block: Extract<TextStreamEvent, { type: 'block_start' }>['block']): TextStreamEvent[] => {
          this.index.set(Number(data.index), at);
          this.next++;
          return [{ type: 'block_start', index: at, block }];
        };
        if (b.type === 'text') {
          const ev = start({ type: 'text' });
          return typeof b.text === 'string' && b.text ? [...ev, { type: 'text_delta', index: at, text: b.text }] : ev;
        }
        if (b.type === 'thinking') return start({ type: 'thinking' });
        if (b.type === 'redacted_thinking') return start({ type: 'thinking', redacted: true, signature: unwrapOpaque(String(b.data ?? ''), 'messages') });
        if (b.type === 'tool_use') return start({ type: 'tool_call', id: String(b.id), name: String(b.name) });
        return [];
      }
      case 'content_block_delta': {
        const d = isObject(data.delta) ? data.delta : {};
        // Text of a block never opened (some compatible upstreams send no content_block_start): opened here.
        if (!this.opened.has(Number(data.index)) && d.type === 'text_delta') return [...this.push({ type: 'content_block_start', index: data.index, content_block: { type: 'text', text: '' } }), ...this.push(data)];
        const at = this.index.get(Number(data.index));
        if (at === undefined) return [];
        if (d.type === 'text_delta') return [{ type: 'text_delta', index: at, text: String(d.text) }];
        if (d.type === 'thinking_delta') return [{ type: 'thinking_delta', index: at, text: String(d.thinking) }];
        if (d.type === 'signature_delta') return [{ type: 'signature', index: at, signature: unwrapOpaque(String(d.signature), 'messages') }];
        if (d.type === 'input_json_delta') return [{ type: 'arguments_delta', index: at, json: String(d.partial_json) }];
        return [];
      }
      case 'content_block_stop': {
        const at = this.index.get(Number(data.index));
        return at === undefined ? [] : [{ type: 'block_stop', index: at }];
      }
      case 'message_delta': {
        const d = isObject(data.delta) ? data.delta : {};
        if (d.stop_reason) this.stop = stopReasonIn(d.stop_reason);
        if (typeof d.stop_sequence === 'string') this.stopSequence = d.stop_sequence;
        // message_delta usage is cumulative; its input fields are null when unchanged since message_start.
        const u = isObject(data.usage) ? data.usage : {};
        const next = usageIn(u);
        this.usage = {
          input: u.input_tokens == null ? this.usage.input : next.input,
          cache_read: u.cache_read_input_tokens == null ? this.usage.cache_read : next.cache_read,
          cache_write: u.cache_creation_input_tokens == null ? this.usage.cache_write : next.cache_write,
          output: typeof u.output_tokens === 'number' ? next.output : this.usage.output,
          ...(next.reasoning !== undefined ? { reasoning: next.reasoning } : this.usage.reasoning !== undefined ? { reasoning: this.usage.reasoning } : {}),
        };
        return [];
      }
      case 'message_stop':
        return this.finish();
      case 'error': {
        const e = isObject(data.error) ? data.error : {};
        this.finished = true;
        return [{ type: 'error', message: String(e.message ?? 'upstream error'), ...(typeof e.type === 'string' ? { code: e.type } : {}) }];
      }
      default:
        return [];
    }
  }

  private finish(): TextStreamEvent[] {
    if (this.finished) return [];
    this.finished = true;
    return [{ type: 'finish', stopReason: this.stop, ...(this.stopSequence !== undefined ? { stopSequence: this.stopSequence } : {}), usage: this.usage }];
  }

  end(): TextStreamEvent[] {
    return [];
  }
}

const frame = (data: Json): SseFrame => ({ event: String(data.type), data: JSON.stringify(data) });

export class MessagesStreamEncoder implements StreamEncoder {
  private pinged = false;

  push(ev: TextStreamEvent): SseFrame[] {
    switch (ev.type) {
      case 'start':
        return [frame({
          type: 'message_start',
          message: {
            id: ev.id, type: 'message', role: 'assistant', model: ev.model, content: [],
            stop_reason: null, stop_sequence: null, stop_details: null, container: null,
            usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
          },
        })];
      case 'block_start': {
        const b = ev.block;
        const block =
          b.type === 'text' ? { type: 'text', text: '' }
          : b.type === 'tool_call' ? { type: 'tool_use', id: b.id, name: b.name, input: {} }
          : b.redacted && b.signature ? { type: 'redacted_thinking', data: wrapOpaque(b.signature, 'messages') }
          : { type: 'thinking', thinking: '', signature: '' };
        const started = frame({ type: 'content_block_start', index: ev.index, content_block: block });
        // The vendor's streams send one ping after the first block opens; clients expect it there.
        if (this.pinged) return [started];
        this.pinged = true;
        return [started, frame({ type: 'ping' })];
      }
      case 'text_delta':
        return [frame({ type: 'content_block_delta', index: ev.index, delta: { type: 'text_delta', text: ev.text } })];
      case 'thinking_delta':
        return [frame({ type: 'content_block_delta', index: ev.index, delta: { type: 'thinking_delta', thinking: ev.text } })];
      case 'signature':
        return [frame({ type: 'content_block_delta', index: ev.index, delta: { type: 'signature_delta', signature: wrapOpaque(ev.signature, 'messages') } })];
      case 'arguments_delta':
        return [frame({ type: 'content_block_delta', index: ev.index, delta: { type: 'input_json_delta', partial_json: ev.json } })];
      case 'block_stop':
        return [frame({ type: 'content_block_stop', index: ev.index })];
      case 'finish':
        return [
          frame({
            type: 'message_delta',
            delta: { stop_reason: ev.stopReason, stop_sequence: ev.stopSequence ?? null, stop_details: null, container: null },
            usage: usageOut(ev.usage),
          }),
          frame({ type: 'message_stop' }),
        ];
      case 'error':
        return [frame({ type: 'error', error: { type: ev.code ?? 'api_error', message: ev.message } })];
    }
  }
}
