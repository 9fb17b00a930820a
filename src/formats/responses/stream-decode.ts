// The Responses API event sequence into neutral stream events.
import { NO_USAGE } from '../../core/usage.ts';
import { customArguments, isObject, unwrapOpaque, type Json, type StreamDecoder, type TextStreamEvent } from '../../core/text/index.ts';
import { stopReasonIn, usageIn } from './answer.ts';

export class ResponsesStreamDecoder implements StreamDecoder {
  private next = 0;
  /** Vendor item id (with content index for message parts) -> neutral block index. */
  private readonly blocks = new Map<string, number>();
  private readonly argsSeen = new Set<string>();
  private readonly summaries = new Map<string, number>();
  private hasCall = false;
  private refused = false;
  private finished = false;

  private open(key: string, block: Extract<TextStreamEvent, { type: 'block_start' }>['block']): TextStreamEvent[] {
    const index = this.next++;
    this.blocks.set(key, index);
    return [{ type: 'block_start', index, block }];
  }

  push(data: unknown): TextStreamEvent[] {
    if (!isObject(data)) return [];
    const id = String(data.item_id ?? '');
    switch (data.type) {
      case 'response.created': {
        const r = isObject(data.response) ? data.response : {};
        return [{ type: 'start', id: String(r.id ?? ''), model: String(r.model ?? ''), ...(typeof r.created_at === 'number' ? { created: r.created_at } : {}) }];
      }
      case 'response.output_item.added': {
        const item = isObject(data.item) ? data.item : {};
        if (item.type === 'function_call') {
          this.hasCall = true;
          return this.open(String(item.id), { type: 'tool_call', id: String(item.call_id), name: String(item.name) });
        }
        if (item.type === 'custom_tool_call') {
          this.hasCall = true;
          return this.open(String(item.id), { type: 'tool_call', id: String(item.call_id), name: String(item.name), custom: true });
        }
        if (item.type === 'reasoning') return this.open(String(item.id), { type: 'thinking', itemId: String(item.id) });
        return [];
      }
      case 'response.content_part.added': {
        const part = isObject(data.part) ? data.part : {};
        if (part.type === 'refusal') this.refused = true;
        if (part.type !== 'output_text' && part.type !== 'refusal') return [];
        return this.open(`${id}:${String(data.content_index)}`, { type: 'text' });
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const at = this.blocks.get(`${id}:${String(data.content_index)}`);
        return at === undefined ? [] : [{ type: 'text_delta', index: at, text: String(data.delta) }];
      }
      case 'response.content_part.done': {
        const at = this.blocks.get(`${id}:${String(data.content_index)}`);
        return at === undefined ? [] : [{ type: 'block_stop', index: at }];
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const at = this.blocks.get(id);
        if (at === undefined) return [];
        // Several summary parts read as paragraphs of one thinking block.
        const part = Number(data.summary_index ?? data.content_index ?? 0);
        const last = this.summaries.get(id);
        this.summaries.set(id, part);
        const sep = last !== undefined && last !== part ? '\n\n' : '';
        return [{ type: 'thinking_delta', index: at, text: sep + String(data.delta) }];
      }
      case 'response.function_call_arguments.delta': {
        const at = this.blocks.get(id);
        this.argsSeen.add(id);
        return at === undefined ? [] : [{ type: 'arguments_delta', index: at, json: String(data.delta) }];
      }
      case 'response.custom_tool_call_input.delta': {
        // Free text travels as the `{"input": ...}` arguments every other format reads, escaped piece by piece.
        const at = this.blocks.get(id);
        if (at === undefined) return [];
        const open = this.argsSeen.has(id) ? '' : '{"input":"';
        this.argsSeen.add(id);
        return [{ type: 'arguments_delta', index: at, json: open + JSON.stringify(String(data.delta)).slice(1, -1) }];
      }
      case 'response.output_item.done':
        return this.itemDone(isObject(data.item) ? data.item : {});
      case 'response.completed':
      case 'response.incomplete': {
        if (this.finished) return [];
        this.finished = true;
        const r = isObject(data.response) ? data.response : {};
        return [{ type: 'finish', stopReason: stopReasonIn(r.status, r.incomplete_details, this.hasCall, this.refused), usage: r.usage ? usageIn(r.usage) : { ...NO_USAGE } }];
      }
      case 'response.failed':
      case 'error': {
        this.finished = true;
        // An error event's fields flat (the OpenAI API) or nested in `error` (as some servers write them).
        const r = isObject(data.response) && isObject(data.response.error) ? data.response.error : isObject(data.error) ? data.error : data;
        return [{ type: 'error', message: String(r.message ?? 'upstream error'), ...(typeof r.code === 'string' ? { code: r.code } : {}) }];
      }
      default:
        return [];
    }
  }

  private itemDone(item: Json): TextStreamEvent[] {
    const key = String(item.id);
    const at = this.blocks.get(key);
    if (at === undefined) return [];
    const out: TextStreamEvent[] = [];
    if (item.type === 'function_call' && !this.argsSeen.has(key) && typeof item.arguments === 'string' && item.arguments)
      out.push({ type: 'arguments_delta', index: at, json: item.arguments });
    if (item.type === 'custom_tool_call')
      out.push({ type: 'arguments_delta', index: at, json: this.argsSeen.has(key) ? '"}' : customArguments(String(item.input ?? '')) });
    if (item.type === 'reasoning' && typeof item.encrypted_content === 'string')
      out.push({ type: 'signature', index: at, signature: { ...unwrapOpaque(item.encrypted_content, 'responses'), id: key } });
    out.push({ type: 'block_stop', index: at });
    return out;
  }

  end(): TextStreamEvent[] {
    return [];
  }
}
