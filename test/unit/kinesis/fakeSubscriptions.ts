/**
 * A scripted SubscribeToShard for the fan-out reader's tests: each subscribe is answered by the test (an
 * event stream it pushes into, or an error), and the stream counts how often the reader asked for the next
 * event, so a test can see that a reader with no room stops reading.
 */
import { SubscribeToShardCommand, type SubscribeToShardCommandInput } from '@aws-sdk/client-kinesis';
import type { KinesisApi } from '../../../src/kinesis/client';

type Item = { event: unknown } | { end: true } | { error: unknown };

const abortError = () => Object.assign(new Error('Request aborted'), { name: 'AbortError' });

/** One subscription's event stream: what the test pushes, read one `next()` at a time. */
export class FakeEventStream {
  /** How many times the reader asked for an event. */
  pulls = 0;
  private readonly queue: Item[] = [];
  private waiting: ((item: Item) => void) | undefined;
  private closed = false;

  constructor(readonly signal: AbortSignal | undefined) {
    signal?.addEventListener('abort', () => this.offer({ error: abortError() }), { once: true });
  }

  push(...events: unknown[]): void {
    for (const event of events) this.offer({ event });
  }

  end(): void {
    this.offer({ end: true });
  }

  fail(error: unknown): void {
    this.offer({ error });
  }

  private offer(item: Item): void {
    if (this.closed) return;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting(item);
    else this.queue.push(item);
  }

  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return {
      next: async () => {
        this.pulls += 1;
        const item = this.queue.shift() ?? (await new Promise<Item>((resolve) => (this.waiting = resolve)));
        if ('error' in item) {
          this.closed = true;
          throw item.error;
        }
        if ('end' in item) {
          this.closed = true;
          return { done: true, value: undefined };
        }
        return { done: false, value: item.event };
      },
      return: async () => {
        this.closed = true;
        return { done: true, value: undefined };
      },
    };
  }
}

export interface Subscribe {
  input: SubscribeToShardCommandInput;
  signal: AbortSignal | undefined;
  /** Answers with an event stream (returned) ... */
  open(): FakeEventStream;
  /** ... or refuses the subscribe. */
  refuse(error: unknown): void;
}

/** The reader's `send`: every SubscribeToShard waits in `subscribes` for the test to answer it. */
export class FakeSubscriptions {
  readonly subscribes: Subscribe[] = [];
  readonly client: KinesisApi;

  constructor() {
    const send = (command: unknown, options?: { abortSignal?: AbortSignal }) => {
      if (!(command instanceof SubscribeToShardCommand)) throw new Error('only SubscribeToShard here');
      const signal = options?.abortSignal;
      return new Promise((resolve, reject) => {
        signal?.addEventListener('abort', () => reject(abortError()), { once: true });
        this.subscribes.push({
          input: command.input,
          signal,
          open: () => {
            const stream = new FakeEventStream(signal);
            resolve({ EventStream: stream, $metadata: {} });
            return stream;
          },
          refuse: (error) => reject(error),
        });
      });
    };
    this.client = { send } as unknown as KinesisApi;
  }

  get last(): Subscribe {
    const last = this.subscribes[this.subscribes.length - 1];
    if (!last) throw new Error('no subscribe yet');
    return last;
  }
}

/** A SubscribeToShardEvent member with records `seqs` (each its own sequence number). */
export function event(
  seqs: string[],
  continuation: string | undefined,
  extra: { MillisBehindLatest?: number; ChildShards?: { ShardId: string; ParentShards?: string[] }[] } = {},
): unknown {
  return {
    SubscribeToShardEvent: {
      Records: seqs.map((s) => ({
        SequenceNumber: s,
        PartitionKey: `pk-${s}`,
        Data: new TextEncoder().encode(`d-${s}`),
        ApproximateArrivalTimestamp: new Date(1_000),
      })),
      ContinuationSequenceNumber: continuation,
      MillisBehindLatest: extra.MillisBehindLatest ?? 0,
      ChildShards: extra.ChildShards?.map((c) => ({ ParentShards: ['s-0'], ...c, HashKeyRange: undefined })),
    },
  };
}

export function kinesisError(name: string, message = name): Error {
  return Object.assign(new Error(message), { name, $metadata: {} });
}
