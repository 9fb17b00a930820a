// The chat completions stream (chunks, then `[DONE]`) to and from neutral stream events.
import { NO_USAGE, type UsageClasses } from '../../core/usage.ts';
import {
  isObject, type Json, type SseFrame, type StopReason, type StreamDecoder, type StreamEncoder, type TextStreamEvent,
} from '../../core/text/index.ts';
import { stopReasonIn, stopReasonOut, usageIn, usageOut } from './answer.ts';
import { ChatCalls } from './stream-calls.ts';

type Open = { kind: 'text' | 'thinking'; index: number };

export class ChatStreamDecoder implements StreamDecoder {
  private started = false;
  private open?: Open;
  private next = 0;
  /** The tool calls, by chat tool index: late argument deltas still find their call. */
  private readonly calls = new ChatCalls(() => this.next++);
  /** The key and id of the call seen last, and the next key for a call that came without an index. */
  private lastTool?: number;
  private lastId?: string;
  private unindexed = -1;
  private stop: StopReason = 'end_turn';
  private usage: UsageClasses = { ...NO_USAGE };
  private done = false;
  private finishSeen = false;

  private closeText(): TextStreamEvent[] {
    const o = this.open;
    this.open = undefined;
    return o ? [{ type: 'block_stop', index: o.index }] : [];
  }

  private close(): TextStreamEvent[] {
    return [...this.closeText(), ...this.calls.close()];
  }

  private openBlock(kind: 'text' | 'thinking'): TextStreamEvent[] {
    if (this.open?.kind === kind) return [];
    const out = this.close();
    this.open = { kind, index: this.next++ };
    return [...out, { type: 'block_start', index: this.open.index, block: { type: kind } }];
  }

  push(data: unknown): TextStreamEvent[] {
    if (data === '[DONE]') return this.finish();
    if (!isObject(data)) return [];
    const out: TextStreamEvent[] = [];
    if (isObject(data.error)) {
      this.done = true;
      return [{ type: 'error', message: String(data.error.message ?? 'upstream error'), ...(typeof data.error.code === 'string' ? { code: data.error.code } : {}) }];
    }
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: String(data.id ?? ''), model: String(data.model ?? ''), ...(typeof data.created === 'number' ? { created: data.created } : {}) });
    }
    if (isObject(data.usage)) this.usage = usageIn(data.usage);
    const choice = Array.isArray(data.choices) && isObject(data.choices[0]) ? data.choices[0] : undefined;
    if (!choice) return out;
    const d = isObject(choice.delta) ? choice.delta : {};
    const reasoning = d.reasoning_content ?? d.reasoning;
    if (typeof reasoning === 'string' && reasoning) out.push(...this.openBlock('thinking'), { type: 'thinking_delta', index: this.open!.index, text: reasoning });
    if (typeof d.content === 'string' && d.content) out.push(...this.openBlock('text'), { type: 'text_delta', index: this.open!.index, text: d.content });
    if (typeof d.refusal === 'string' && d.refusal) {
      out.push(...this.openBlock('text'), { type: 'text_delta', index: this.open!.index, text: d.refusal });
      this.stop = 'refusal';
    }
    if (Array.isArray(d.tool_calls))
      for (const tc of d.tool_calls) {
        if (!isObject(tc)) continue;
        const fn = isObject(tc.function) ? tc.function : {};
        // Some compatible upstreams (Gemini's among them) send no index: a delta with a new id opens a
        // call, one without (or with the same id again) continues the call seen last.
        const id = typeof tc.id === 'string' && tc.id ? tc.id : undefined;
        const k = typeof tc.index === 'number' ? tc.index : (id === undefined || id === this.lastId) && this.lastTool !== undefined ? this.lastTool : this.unindexed--;
        this.lastTool = k;
        if (id) this.lastId = id;
        if (!this.calls.has(k)) out.push(...this.calls.start(k, String(tc.id ?? ''), String(fn.name ?? ''), () => this.closeText()));
        if (typeof fn.arguments === 'string' && fn.arguments) out.push(...this.calls.arguments(k, fn.arguments));
      }
    if (choice.finish_reason) {
      this.finishSeen = true;
      if (this.stop !== 'refusal') this.stop = stopReasonIn(choice.finish_reason, this.calls.count > 0);
      out.push(...this.close());
    }
    return out;
  }

  private finish(): TextStreamEvent[] {
    if (this.done) return [];
    this.done = true;
    return [...this.close(), { type: 'finish', stopReason: this.stop, usage: this.usage }];
  }

  /**
   * Some compatible upstreams end without `[DONE]`: after a finish reason that is still a whole answer.
   * Before one, the stream was cut, and no finish is made up.
   */
  end(): TextStreamEvent[] {
    return this.finishSeen ? this.finish() : [];
  }
}

export class ChatStreamEncoder implements StreamEncoder {
  private head: Json = {};
  private readonly tools = new Map<number, number>();

  /** `includeUsage`: the caller asked for the usage chunk (`stream_options.include_usage`). */
  constructor(private readonly includeUsage = false) {}

  private chunk(delta: Json, finish: string | null = null): SseFrame {
    return { data: JSON.stringify({ ...this.head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] }) };
  }

  push(ev: TextStreamEvent): SseFrame[] {
    switch (ev.type) {
      case 'start':
        this.head = { id: ev.id, object: 'chat.completion.chunk', created: ev.created ?? Math.floor(Date.now() / 1000), model: ev.model };
        return [this.chunk({ role: 'assistant', content: '', refusal: null })];
      case 'block_start':
        if (ev.block.type !== 'tool_call') return [];
        this.tools.set(ev.index, this.tools.size);
        return [this.chunk({ tool_calls: [{ index: this.tools.get(ev.index), id: ev.block.id, type: 'function', function: { name: ev.block.name, arguments: '' } }] })];
      case 'text_delta':
        return [this.chunk({ content: ev.text })];
      case 'arguments_delta':
        return [this.chunk({ tool_calls: [{ index: this.tools.get(ev.index) ?? 0, function: { arguments: ev.json } }] })];
      // Chat completions have no thinking content: the answer is the same without it.
      case 'thinking_delta':
      case 'signature':
      case 'block_stop':
        return [];
      case 'finish': {
        const frames = [this.chunk({}, stopReasonOut(ev.stopReason))];
        if (this.includeUsage) frames.push({ data: JSON.stringify({ ...this.head, choices: [], usage: usageOut(ev.usage) }) });
        frames.push({ data: '[DONE]' });
        return frames;
      }
      case 'error':
        return [{ data: JSON.stringify({ error: { message: ev.message, type: 'server_error', code: ev.code ?? null, param: null } }) }];
    }
  }
}
