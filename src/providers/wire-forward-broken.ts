import { sseText, type Json } from '../core/text/index.ts';
import type { StreamError } from '../core/text/provider.ts';
import { usageOut } from '../formats/responses/answer.ts';
import { failureEvents } from '../formats/responses/stream-failed.ts';
import type { ReportedUsage } from '../lib/tokens/tokens.ts';
import { BOUNDARY, dataOf, firstBoundary, parseData } from './sse-blocks.ts';

// How a forwarded Responses stream (wire-forward.ts) ends when it breaks off: the gateway's error
// and response.failed (formats/responses/stream-failed.ts), numbered on from the upstream's last
// event and naming the response its response.created told the caller of. The events are read only
// then: while the stream runs, its first event is kept (a copy) and its last block forwarded.

const CREATED = Buffer.from('"response.created"');

type Data = { type?: unknown; sequence_number?: unknown; response?: unknown };
const dataIn = (event: string) => parseData(dataOf(event)) as Data | undefined;
const numberOf = (data: Data | undefined) => (typeof data?.sequence_number === 'number' ? data.sequence_number : undefined);

export class ForwardedResponses {
  /** The stream's first event when it is response.created; null when it is another; undefined before it. */
  private created: Buffer | null | undefined;
  private last: Buffer | undefined;

  /** Told of each block forwarded (whole events), in order. */
  seen(block: Buffer): void {
    if (this.created === undefined) {
      const end = firstBoundary(block);
      const first = end < 0 ? block : block.subarray(0, end);
      // Copied: a view would hold the whole read it came in for as long as the stream runs.
      this.created = first.includes(CREATED) ? Buffer.from(first) : null;
    }
    this.last = block;
  }

  /** The closing events; `usage`: what the upstream reported of it (with response.failed, all of it). */
  broken(error: StreamError, usage: ReportedUsage | undefined): string {
    const created = this.created ? dataIn(this.created.toString('utf8')) : undefined;
    const response = created?.type === 'response.created' && created.response && typeof created.response === 'object' ? (created.response as Json) : undefined;
    let seq = this.lastNumber() ?? numberOf(created) ?? -1;
    const events = failureEvents(error, response && { ...response, usage: usageOf(usage) });
    return sseText(events.map((body) => ({ event: String(body.type), data: JSON.stringify({ ...body, sequence_number: ++seq }) })));
  }

  /** The highest sequence_number in the last block forwarded (an upstream numbers each event it sends). */
  private lastNumber(): number | undefined {
    let highest: number | undefined;
    for (const event of (this.last?.toString('utf8') ?? '').split(BOUNDARY)) {
      const n = numberOf(dataIn(event));
      if (n !== undefined && (highest === undefined || n > highest)) highest = n;
    }
    return highest;
  }
}

/** The usage as a Response says it, when the upstream reported both its prompt and its output; else null. */
function usageOf(u: ReportedUsage | undefined): Json | null {
  if (u?.input === undefined || u.output === undefined) return null;
  return usageOut({ input: u.input, cache_read: u.cache_read ?? 0, cache_write: u.cache_write ?? 0, output: u.output, ...(u.reasoning !== undefined ? { reasoning: u.reasoning } : {}) });
}
