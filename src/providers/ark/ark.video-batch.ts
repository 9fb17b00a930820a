import type { Channel } from '../../core/channel.ts';
import type { TaskCall } from '../../core/task-provider.ts';
import type { ArkTaskList } from './ark.answers.ts';

// Polling at scale. Thousands of open video tasks must not mean thousands of GETs a
// second: polls of one channel that arrive together become one list call
// (`GET /api/v3/contents/generations/tasks?page_size=N&filter.task_ids=a&filter.task_ids=b`, as
// volcengine-python-sdk's content_generation tasks.list sends it), and every call to the channel
// (create, poll, list, cancel) waits for a slot under its `max_requests_per_second`. The limit is a
// sliding window (no 1-second window ever holds more) and is per process: N processes may send N
// times as much.

const TASKS = '/api/v3/contents/generations/tasks';
/** Polls that arrive within this long of each other share a call. */
const GATHER_MS = 20;
/** The list endpoint's largest page is 500; smaller batches keep one answer small. */
const MAX_BATCH = 100;

export function requestsPerSecond(channel: Channel): number | undefined {
  const value = channel.options.max_requests_per_second;
  return Number.isInteger(value) && (value as number) > 0 ? (value as number) : undefined;
}

/**
 * At most `limit` starts in any WINDOW_MS. The window is longer than a second so that a request
 * delayed on its way (a busy event loop, the network) still arrives in a second of its own there.
 */
const WINDOW_MS = 1100;

class SlidingWindow {
  private readonly starts: number[] = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(public limit: number) {}

  take(): Promise<void> {
    const turn = this.queue.then(async () => {
      for (;;) {
        const now = Date.now();
        while (this.starts.length > 0 && now - this.starts[0]! >= WINDOW_MS) this.starts.shift();
        if (this.starts.length < this.limit) {
          this.starts.push(now);
          return;
        }
        await new Promise((r) => setTimeout(r, WINDOW_MS - (now - this.starts[0]!) + 1));
      }
    });
    this.queue = turn;
    return turn;
  }
}

/** One call's JSON as it came (arkVideoCall). */
type Fetch = (call: TaskCall, method: 'GET', path: string) => Promise<unknown>;

interface Waiting {
  call: TaskCall;
  resolve(record: unknown): void;
  reject(err: unknown): void;
}

export class ArkRequestPacer {
  private readonly windows = new Map<string, SlidingWindow>();
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(private readonly fetch: Fetch) {}

  /** Waits for the channel's next slot (immediately when it has no limit). */
  async slot(channel: Channel): Promise<void> {
    const limit = requestsPerSecond(channel);
    if (!limit) return;
    let window = this.windows.get(channel.id);
    if (!window) this.windows.set(channel.id, (window = new SlidingWindow(limit)));
    window.limit = limit;
    await window.take();
  }

  /** The task's record, from a list call shared with the channel's other polls of the moment. */
  poll(call: TaskCall): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(call.channel.id);
      if (list) return void list.push({ call, resolve, reject });
      this.waiting.set(call.channel.id, [{ call, resolve, reject }]);
      setTimeout(() => void this.flush(call.channel.id), GATHER_MS);
    });
  }

  private async flush(channelId: string): Promise<void> {
    const list = this.waiting.get(channelId) ?? [];
    // Later polls start the next batch while this one is out.
    this.waiting.delete(channelId);
    for (let i = 0; i < list.length; i += MAX_BATCH) await this.send(list.slice(i, i + MAX_BATCH));
  }

  private async send(batch: Waiting[]): Promise<void> {
    const first = batch[0]!.call;
    try {
      await this.slot(first.channel);
      if (batch.length === 1) return batch[0]!.resolve(await this.fetch(first, 'GET', `${TASKS}/${encodeURIComponent(first.task.upstream_id ?? '')}`));
      const query = new URLSearchParams({ page_num: '1', page_size: String(batch.length) });
      for (const w of batch) query.append('filter.task_ids', w.call.task.upstream_id ?? '');
      const answer = (await this.fetch(first, 'GET', `${TASKS}?${query}`)) as ArkTaskList | null;
      const items = new Map((answer?.items ?? []).map((item) => [String(item?.id), item]));
      const missing: Waiting[] = [];
      for (const w of batch) {
        const item = items.get(w.call.task.upstream_id ?? '');
        if (item) w.resolve(item);
        else missing.push(w);
      }
      // Not listed (deleted there, or the list lags): ask for each alone, which also tells a 404.
      for (const w of missing) await this.send([w]);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
