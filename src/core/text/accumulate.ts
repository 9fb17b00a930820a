// Builds the whole answer out of a neutral stream: what a stored response or a non-stream caller reads.
import { NO_USAGE } from '../usage.ts';
import type { AnswerPart, TextAnswer } from './answer.ts';
import type { TextStreamEvent } from './stream.ts';

export class AnswerAccumulator {
  private readonly answer: TextAnswer = { id: '', model: '', content: [], stopReason: 'end_turn', usage: { ...NO_USAGE } };
  private readonly blocks = new Map<number, AnswerPart>();
  finished = false;

  push(ev: TextStreamEvent): void {
    switch (ev.type) {
      case 'start':
        this.answer.id = ev.id;
        this.answer.model = ev.model;
        if (ev.created !== undefined) this.answer.created = ev.created;
        return;
      case 'block_start': {
        const b = ev.block;
        const part: AnswerPart =
          b.type === 'text'
            ? { type: 'text', text: '' }
            : b.type === 'thinking'
              ? { type: 'thinking', text: '', ...(b.redacted ? { redacted: true } : {}), ...(b.signature ? { signature: b.signature } : {}), ...(b.itemId ? { itemId: b.itemId } : {}) }
              : { type: 'tool_call', id: b.id, name: b.name, arguments: '', ...(b.signature ? { signature: b.signature } : {}), ...(b.custom ? { custom: true } : {}) };
        this.blocks.set(ev.index, part);
        this.answer.content.push(part);
        return;
      }
      case 'text_delta':
      case 'thinking_delta': {
        const p = this.blocks.get(ev.index);
        if (p && (p.type === 'text' || p.type === 'thinking')) p.text += ev.text;
        return;
      }
      case 'signature': {
        const p = this.blocks.get(ev.index);
        if (p) p.signature = ev.signature;
        return;
      }
      case 'arguments_delta': {
        const p = this.blocks.get(ev.index);
        if (p?.type === 'tool_call') p.arguments += ev.json;
        return;
      }
      case 'block_stop':
      case 'error':
        return;
      case 'finish':
        this.answer.stopReason = ev.stopReason;
        if (ev.stopSequence !== undefined) this.answer.stopSequence = ev.stopSequence;
        this.answer.usage = ev.usage;
        this.finished = true;
    }
  }

  result(): TextAnswer {
    return this.answer;
  }
}

export const accumulate = (events: TextStreamEvent[]): TextAnswer => {
  const acc = new AnswerAccumulator();
  for (const ev of events) acc.push(ev);
  return acc.result();
};
