// Parallel tool calls of a chat stream, put in the one-block-at-a-time order of the neutral stream.
// Some compatible upstreams interleave the argument pieces of parallel calls (index 0, 1, 0, 1);
// every other format's stream closes a call for good (a messages content_block_stop, a Responses
// output_item.done, a whole Gemini functionCall), so a call is not closed while its arguments may
// still grow: a call that starts while the one streaming is unfinished waits, its pieces kept, and
// goes out whole when the stream's calls end. Calls that come one after another (OpenAI's order)
// still stream live: the one streaming is closed once its arguments are whole JSON.
import type { TextStreamEvent } from '../../core/text/index.ts';

interface Waiting {
  id: string;
  name: string;
  args: string;
}

const whole = (json: string): boolean => {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
};

export class ChatCalls {
  /** The call streaming live: its chat key, neutral index and arguments so far. */
  private live?: { key: number; index: number; args: string };
  private readonly waiting = new Map<number, Waiting>();
  /** Chat key -> neutral index of every call that went out. */
  private readonly indexes = new Map<number, number>();

  constructor(private readonly nextIndex: () => number) {}

  get count(): number {
    return this.indexes.size + this.waiting.size;
  }

  /** Whether `key` names a call already seen. */
  has(key: number): boolean {
    return this.indexes.has(key) || this.waiting.has(key);
  }

  /** A new call; `before`: what must close first when it streams live (an open text block). */
  start(key: number, id: string, name: string, before: () => TextStreamEvent[]): TextStreamEvent[] {
    if (this.live && !whole(this.live.args)) {
      this.waiting.set(key, { id, name, args: '' });
      return [];
    }
    const out = [...before(), ...this.stopLive()];
    const next = this.waiting.entries().next();
    if (!next.done) {
      // The first waiting call goes out now, with what it had; the new one waits behind it.
      const [waitingKey, w] = next.value;
      this.waiting.delete(waitingKey);
      out.push(...this.goLive(waitingKey, w));
      this.waiting.set(key, { id, name, args: '' });
      return out;
    }
    return [...out, ...this.goLive(key, { id, name, args: '' })];
  }

  arguments(key: number, json: string): TextStreamEvent[] {
    const w = this.waiting.get(key);
    if (w) {
      w.args += json;
      return [];
    }
    if (this.live?.key === key) this.live.args += json;
    const index = this.indexes.get(key);
    return index === undefined ? [] : [{ type: 'arguments_delta', index, json }];
  }

  /** The calls end (a finish reason, or text after them): the live one closes, the waiting ones go out whole. */
  close(): TextStreamEvent[] {
    const out = this.stopLive();
    for (const [key, w] of this.waiting) out.push(...this.goLive(key, w), ...this.stopLive());
    this.waiting.clear();
    return out;
  }

  private goLive(key: number, w: Waiting): TextStreamEvent[] {
    const index = this.nextIndex();
    this.indexes.set(key, index);
    this.live = { key, index, args: w.args };
    const out: TextStreamEvent[] = [{ type: 'block_start', index, block: { type: 'tool_call', id: w.id, name: w.name } }];
    if (w.args) out.push({ type: 'arguments_delta', index, json: w.args });
    return out;
  }

  private stopLive(): TextStreamEvent[] {
    const live = this.live;
    this.live = undefined;
    return live ? [{ type: 'block_stop', index: live.index }] : [];
  }
}
