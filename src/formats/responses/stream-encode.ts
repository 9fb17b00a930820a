// Neutral stream events into the Responses API event sequence, each event numbered (`sequence_number`).
import { NO_USAGE } from '../../core/usage.ts';
import { wrapOpaque, type AnswerPart, type Json, type SseFrame, type StreamEncoder, type TextStreamEvent } from '../../core/text/index.ts';
import { AnswerAccumulator } from '../../core/text/accumulate.ts';
import { customToolNames, itemId, toolNamespaces, outputItemOut, responseObject, statusOf } from './answer.ts';
import { failureEvents } from './stream-failed.ts';

export class ResponsesStreamEncoder implements StreamEncoder {
  private seq = 0;
  private readonly acc = new AnswerAccumulator();
  /** Neutral block index -> output index and item id. */
  private readonly items = new Map<number, { output: number; id: string }>();
  private readonly done: Json[] = [];
  private summaryOpen = new Set<number>();
  /** The response's created_at, as response.created said it (set when that went out). */
  private created: number | undefined;

  /** `echo`: the request's settings the Response object shows (tools, instructions, ...). */
  private readonly custom: Set<string>;
  private readonly namespaces: Map<string, string>;

  constructor(private readonly echo: Json = {}) {
    this.custom = customToolNames(echo);
    this.namespaces = toolNamespaces(echo);
  }

  private isCustom(p: AnswerPart): boolean {
    return p.type === 'tool_call' && (p.custom === true || this.custom.has(p.name));
  }

  private ev(type: string, body: Json): SseFrame {
    return { event: type, data: JSON.stringify({ type, ...body, sequence_number: this.seq++ }) };
  }

  private response(status: string, output: Json[]): Json {
    const a = this.acc.result();
    return responseObject({ ...a, ...(this.created !== undefined ? { created: this.created } : {}), usage: a.usage ?? { ...NO_USAGE } }, status, output, this.echo);
  }

  /** The output so far: the items done as they went out, one cut off midway as far as it came, incomplete. */
  private outputSoFar(): Json[] {
    const done = new Map(this.done.map((item) => [item.id, item]));
    const a = this.acc.result();
    return [...this.items.values()].map(({ output, id }) => {
      if (done.has(id)) return done.get(id)!;
      const item = outputItemOut(a.content[output]!, a.id, output, this.custom, this.namespaces);
      return 'status' in item ? { ...item, id, status: 'incomplete' } : { ...item, id };
    });
  }

  private part(index: number): AnswerPart {
    return this.acc.result().content[this.items.get(index)!.output];
  }

  push(e: TextStreamEvent): SseFrame[] {
    this.acc.push(e);
    const a = this.acc.result();
    switch (e.type) {
      case 'start':
        this.created = e.created ?? Math.floor(Date.now() / 1000);
        return [this.ev('response.created', { response: this.response('in_progress', []) }), this.ev('response.in_progress', { response: this.response('in_progress', []) })];
      case 'block_start': {
        const output = a.content.length - 1;
        const b = e.block;
        const custom = b.type === 'tool_call' && this.isCustom(a.content[output]);
        const id = b.type === 'text' ? itemId('msg', a.id, output) : b.type === 'tool_call' ? itemId(custom ? 'ctc' : 'fc', a.id, output) : (b.itemId ?? itemId('rs', a.id, output));
        this.items.set(e.index, { output, id });
        const at = { output_index: output };
        const namespace = b.type === 'tool_call' && this.namespaces.has(b.name) ? { namespace: this.namespaces.get(b.name) } : {};
        if (b.type === 'text')
          return [
            this.ev('response.output_item.added', { ...at, item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } }),
            this.ev('response.content_part.added', { item_id: id, ...at, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } }),
          ];
        if (b.type === 'tool_call' && custom)
          return [this.ev('response.output_item.added', { ...at, item: { id, type: 'custom_tool_call', status: 'in_progress', call_id: b.id, ...namespace, name: b.name, input: '' } })];
        if (b.type === 'tool_call')
          return [this.ev('response.output_item.added', { ...at, item: { id, type: 'function_call', status: 'in_progress', call_id: b.id, ...namespace, name: b.name, arguments: '' } })];
        return [this.ev('response.output_item.added', { ...at, item: { id, type: 'reasoning', summary: [] } })];
      }
      case 'text_delta': {
        const it = this.items.get(e.index)!;
        return [this.ev('response.output_text.delta', { item_id: it.id, output_index: it.output, content_index: 0, delta: e.text, logprobs: [] })];
      }
      case 'thinking_delta': {
        const it = this.items.get(e.index)!;
        const open = this.summaryOpen.has(e.index) ? [] : [this.ev('response.reasoning_summary_part.added', { item_id: it.id, output_index: it.output, summary_index: 0, part: { type: 'summary_text', text: '' } })];
        this.summaryOpen.add(e.index);
        return [...open, this.ev('response.reasoning_summary_text.delta', { item_id: it.id, output_index: it.output, summary_index: 0, delta: e.text })];
      }
      case 'arguments_delta': {
        const it = this.items.get(e.index)!;
        // Free text is only known whole once its JSON wrapper is complete: it goes out at the block's end.
        if (this.isCustom(this.part(e.index))) return [];
        return [this.ev('response.function_call_arguments.delta', { item_id: it.id, output_index: it.output, delta: e.json })];
      }
      case 'signature':
        return [];
      case 'block_stop':
        return this.stop(e.index);
      case 'finish': {
        const status = statusOf(e.stopReason);
        const type = status === 'incomplete' ? 'response.incomplete' : 'response.completed';
        return [this.ev(type, { response: this.response(status, this.done) })];
      }
      case 'error': {
        // The usage is not known before the finish that never came.
        const failed = this.created === undefined ? undefined : { ...this.response('failed', this.outputSoFar()), usage: null };
        return failureEvents(e, failed).map((body) => this.ev(String(body.type), body));
      }
    }
  }

  private stop(index: number): SseFrame[] {
    const it = this.items.get(index);
    if (!it) return [];
    const p = this.part(index);
    const a = this.acc.result();
    const item: Json = { ...outputItemOut(p, a.id, it.output, this.custom, this.namespaces), id: it.id };
    this.done.push(item);
    const at = { item_id: it.id, output_index: it.output };
    const frames: SseFrame[] = [];
    if (p.type === 'text') {
      const part = { type: 'output_text', text: p.text, annotations: [], logprobs: [] };
      frames.push(this.ev('response.output_text.done', { ...at, content_index: 0, text: p.text, logprobs: [] }), this.ev('response.content_part.done', { ...at, content_index: 0, part }));
    } else if (p.type === 'tool_call' && item.type === 'custom_tool_call') {
      frames.push(
        this.ev('response.custom_tool_call_input.delta', { ...at, delta: item.input }),
        this.ev('response.custom_tool_call_input.done', { ...at, input: item.input }),
      );
    } else if (p.type === 'tool_call') {
      frames.push(this.ev('response.function_call_arguments.done', { ...at, name: p.name, arguments: p.arguments }));
    } else if (this.summaryOpen.has(index)) {
      frames.push(
        this.ev('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: p.text }),
        this.ev('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: p.text } }),
      );
      if (p.signature) item.encrypted_content = wrapOpaque(p.signature, 'responses');
    }
    frames.push(this.ev('response.output_item.done', { output_index: it.output, item }));
    return frames;
  }
}
