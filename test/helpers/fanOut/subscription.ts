/**
 * One SubscribeToShard call being served: kinesis-local read with GetRecords every `pollIntervalMs` (at
 * once again while there is a backlog) and what it returns pushed as SubscribeToShardEvents on the HTTP/2
 * stream, after an `initial-response` event.
 *
 * - Every event carries `ContinuationSequenceNumber` (the last record pushed: AFTER_SEQUENCE_NUMBER it is
 *   the next record) and `MillisBehindLatest`. With nothing to push, an empty event at most every
 *   `idleEventMs` (once the continuation is known).
 * - A closed shard read to its end: a last event with the `ChildShards`, then the stream ends. Its form is
 *   `shardEnd`: `noContinuation` (no records, no ContinuationSequenceNumber: the form the project's emulators
 *   and KCL's tests use), or `continuation`, the API reference's letter (ContinuationSequenceNumber is required
 *   in every event, ChildShards comes only at the end): the shard's last records, if the last read had any,
 *   and the continuation (the last record, else the shard's ending sequence number) beside the children.
 * - After `lifetimeMs` the stream ends (END_STREAM, no error), as AWS ends a subscription after 5 minutes.
 * - Back-pressure: when `stream.write` says the HTTP/2 window is full, nothing more is read from
 *   kinesis-local until 'drain', so a client that stops reading holds the server (and its memory) still.
 * - The offered rate is capped at `maxBytesPerSecond` of event bytes (AWS: 2 MB/s per shard and consumer).
 */
import type { ServerHttp2Stream } from 'node:http2';
import type { Consumer } from './consumers';
import { corrupt, eventMessage, exceptionMessage } from './eventStream';
import type { FaultRules } from './faults';
import { type GetRecordsPage, type KinesisRecord, listShards, type Start } from './position';
import { KinesisError, type Upstream } from './upstream';

export interface SubscriptionSettings {
  lifetimeMs: number;
  pollIntervalMs: number;
  maxBytesPerSecond: number;
  recordsPerCall: number;
  idleEventMs: number;
  /** The last event's form (see above). */
  shardEnd: 'noContinuation' | 'continuation';
}

export type EndReason =
  | 'lifetime'
  | 'shardEnd'
  | 'clientClosed'
  | 'fault'
  | 'takenOver'
  | 'deregistered'
  | 'failed'
  | 'serverClosed';

export interface SubscriptionStats {
  readonly id: number;
  readonly consumerArn: string;
  readonly shardId: string;
  readonly recordsPushed: number;
  readonly eventsPushed: number;
  readonly bytesPushed: number;
  readonly getRecordsCalls: number;
  /** Bytes written to the HTTP/2 stream and not yet taken by the connection (the peer's window full). */
  readonly bufferedBytes: number;
  readonly maxBufferedBytes: number;
  /** True while waiting for 'drain': kinesis-local is not read meanwhile. */
  readonly waitingForDrain: boolean;
  readonly ended: EndReason | undefined;
}

let nextId = 0;

export class Subscription implements SubscriptionStats {
  readonly id = ++nextId;
  recordsPushed = 0;
  eventsPushed = 0;
  bytesPushed = 0;
  getRecordsCalls = 0;
  maxBufferedBytes = 0;
  waitingForDrain = false;
  ended: EndReason | undefined;
  private iterator: string | null;
  private continuation: string | undefined;
  private skipBefore: number | undefined;
  private lastEventAt = 0;
  private allowance: number;
  private allowanceAt = Date.now();
  private readonly wake = new AbortController();
  private readonly lifetime: NodeJS.Timeout;
  private readonly finished: Promise<void>;

  constructor(
    private readonly stream: ServerHttp2Stream,
    readonly consumer: Consumer,
    readonly shardId: string,
    start: Start,
    private readonly kinesis: Upstream,
    private readonly settings: SubscriptionSettings,
    private readonly faults: FaultRules,
    private readonly onEnd: (s: Subscription) => void,
  ) {
    this.iterator = start.iterator;
    this.continuation = start.continuation;
    this.skipBefore = start.skipBefore;
    this.allowance = settings.maxBytesPerSecond;
    this.lifetime = setTimeout(() => this.end('lifetime'), settings.lifetimeMs);
    stream.on('close', () => this.end('clientClosed'));
    stream.on('error', () => this.end('clientClosed'));
    this.finished = this.run().catch((err: Error) => this.end('failed', 'InternalFailureException', err.message));
  }

  get consumerArn(): string {
    return this.consumer.arn;
  }

  get bufferedBytes(): number {
    return this.stream.destroyed ? 0 : this.stream.writableLength;
  }

  /** Ends the subscription: with an exception event if a type is given, else as its lifetime ends. */
  end(reason: EndReason, exceptionType?: string, message?: string): void {
    if (this.ended) return;
    this.ended = reason;
    clearTimeout(this.lifetime);
    this.wake.abort();
    if (!this.stream.destroyed && !this.stream.closed && reason !== 'clientClosed') {
      if (exceptionType) this.stream.end(exceptionMessage(exceptionType, message ?? exceptionType));
      else this.stream.end();
    }
    this.onEnd(this);
  }

  /** Resolves once the loop has stopped (after end()). */
  done(): Promise<void> {
    return this.finished;
  }

  private async run(): Promise<void> {
    await this.write(eventMessage('initial-response', {}));
    while (!this.ended) {
      await this.holdWhileStalled();
      if (this.ended) return;
      if (this.iterator === null) return this.shardEnd(undefined);
      const page = await this.read(this.iterator);
      if (this.ended || page === undefined) continue;
      const records = this.skipped(page.Records ?? []);
      this.iterator = page.NextShardIterator ?? null;
      const behind = page.MillisBehindLatest ?? 0;
      if (records.length > 0 && this.iterator === null && this.settings.shardEnd === 'continuation') {
        // The reference's form: the shard's last records arrive in the event that ends it.
        await this.shardEnd(page, records);
        this.recordsPushed += records.length;
        return;
      }
      if (records.length > 0) {
        this.continuation = records[records.length - 1].SequenceNumber;
        await this.pushEvent({
          Records: records,
          ContinuationSequenceNumber: this.continuation,
          MillisBehindLatest: behind,
        });
        this.recordsPushed += records.length;
      } else if (this.iterator === null) {
        return this.shardEnd(page);
      } else {
        const idle = Date.now() - this.lastEventAt >= this.settings.idleEventMs;
        if (idle && this.continuation !== undefined)
          await this.pushEvent({
            Records: [],
            ContinuationSequenceNumber: this.continuation,
            MillisBehindLatest: behind,
          });
        // Only a read that found nothing waits: records passed over (AT_TIMESTAMP) mean more to read now.
        if ((page.Records ?? []).length === 0) await this.sleep(this.settings.pollIntervalMs);
      }
    }
  }

  /** One GetRecords; undefined when it should simply be tried again (throttled, iterator renewed). */
  private async read(iterator: string): Promise<GetRecordsPage | undefined> {
    try {
      this.getRecordsCalls += 1;
      return await this.kinesis.call<GetRecordsPage>('GetRecords', {
        ShardIterator: iterator,
        Limit: this.settings.recordsPerCall,
      });
    } catch (err) {
      if (!(err instanceof KinesisError)) throw err;
      if (err.type === 'ProvisionedThroughputExceededException' || err.status >= 500) {
        await this.sleep(this.settings.pollIntervalMs * 4);
        return undefined;
      }
      if (err.type === 'ExpiredIteratorException' && this.continuation !== undefined) {
        const renewed = await this.kinesis.call<{ ShardIterator?: string | null }>('GetShardIterator', {
          StreamName: this.consumer.streamName,
          ShardId: this.shardId,
          ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
          StartingSequenceNumber: this.continuation,
        });
        this.iterator = renewed.ShardIterator ?? null;
        return undefined;
      }
      throw err;
    }
  }

  /** AT_TIMESTAMP: records that arrived before the timestamp are passed over, each the continuation. */
  private skipped(records: KinesisRecord[]): KinesisRecord[] {
    const before = this.skipBefore;
    if (before === undefined) return records;
    const first = records.findIndex((r) => r.ApproximateArrivalTimestamp >= before);
    const passed = first === -1 ? records : records.slice(0, first);
    if (passed.length > 0) this.continuation = passed[passed.length - 1].SequenceNumber;
    if (first === -1) return [];
    this.skipBefore = undefined;
    return records.slice(first);
  }

  /** The last event of a closed shard read to its end, in the `shardEnd` form, with `records` (its last ones); then the end. */
  private async shardEnd(page: GetRecordsPage | undefined, records: KinesisRecord[] = []): Promise<void> {
    const ChildShards = await this.childShards(page);
    if (this.settings.shardEnd === 'noContinuation') {
      await this.pushEvent({ Records: [], MillisBehindLatest: 0, ChildShards });
    } else {
      if (records.length > 0) this.continuation = records[records.length - 1].SequenceNumber;
      const continuation = this.continuation ?? (await this.endingSequenceNumber());
      await this.pushEvent({
        Records: records,
        ContinuationSequenceNumber: continuation,
        MillisBehindLatest: page?.MillisBehindLatest ?? 0,
        ChildShards,
      });
    }
    this.end('shardEnd');
  }

  /** A closed shard's last sequence number, as the listing gives it: the continuation of an end with nothing read. */
  private async endingSequenceNumber(): Promise<string | undefined> {
    const shards = await listShards(this.kinesis, this.consumer.streamName);
    const shard = shards.find((s) => s.ShardId === this.shardId);
    return shard?.SequenceNumberRange.EndingSequenceNumber ?? undefined;
  }

  private async childShards(page: GetRecordsPage | undefined): Promise<unknown[]> {
    if (page?.ChildShards && page.ChildShards.length > 0) return page.ChildShards;
    const shards = await listShards(this.kinesis, this.consumer.streamName);
    return shards
      .filter((s) => s.ParentShardId === this.shardId || s.AdjacentParentShardId === this.shardId)
      .map((s) => ({
        ShardId: s.ShardId,
        ParentShards: [s.ParentShardId, s.AdjacentParentShardId].filter((p): p is string => Boolean(p)),
        HashKeyRange: s.HashKeyRange,
      }));
  }

  private target() {
    return {
      shardId: this.shardId,
      consumerArn: this.consumer.arn,
      consumerName: this.consumer.name,
      recordsPushed: this.recordsPushed,
    };
  }

  private async holdWhileStalled(): Promise<void> {
    const stall = this.faults.fire(['stall'], this.target());
    while (stall?.live() && !this.ended) await this.sleep(this.settings.pollIntervalMs);
  }

  private async pushEvent(body: Record<string, unknown>): Promise<void> {
    const fault = this.faults.fire(['reset', 'errorEvent', 'corrupt'], this.target());
    let message = eventMessage('SubscribeToShardEvent', body);
    if (fault?.rule.kind === 'reset') {
      // The whole connection: a session's `socket` refuses destroy() (ERR_HTTP2_NO_SOCKET_MANIPULATION), the
      // session's own destroy() ends it and its socket, failing every stream on it.
      if (fault.rule.how === 'destroySocket') this.stream.session?.destroy(new Error('injected connection drop'));
      // destroy(error) sends RST_STREAM(INTERNAL_ERROR); close(code) after the request's end reads as a clean end.
      else this.stream.destroy(new Error('injected reset'));
      this.end('fault');
      return;
    }
    if (fault?.rule.kind === 'errorEvent') {
      this.end('fault', fault.rule.exceptionType, fault.rule.message ?? `injected ${fault.rule.exceptionType}`);
      return;
    }
    if (fault?.rule.kind === 'corrupt') message = corrupt(message, fault.rule.part);
    await this.pace(message.length);
    if (this.ended) return;
    await this.write(message);
    this.eventsPushed += 1;
    this.lastEventAt = Date.now();
  }

  /** A token bucket of one second's bytes: an event over the allowance waits until it is paid for. */
  private async pace(bytes: number): Promise<void> {
    const rate = this.settings.maxBytesPerSecond;
    const now = Date.now();
    this.allowance = Math.min(rate, this.allowance + ((now - this.allowanceAt) * rate) / 1000);
    this.allowanceAt = now;
    this.allowance -= bytes;
    if (this.allowance < 0) await this.sleep((-this.allowance / rate) * 1000);
  }

  private async write(message: Buffer): Promise<void> {
    if (this.ended || this.stream.destroyed) return;
    const more = this.stream.write(message);
    this.bytesPushed += message.length;
    this.maxBufferedBytes = Math.max(this.maxBufferedBytes, this.stream.writableLength);
    if (more) return;
    this.waitingForDrain = true;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off('drain', done);
        this.stream.off('close', done);
        this.wake.signal.removeEventListener('abort', done);
        resolve();
      };
      this.stream.on('drain', done);
      this.stream.on('close', done);
      this.wake.signal.addEventListener('abort', done);
    });
    this.waitingForDrain = false;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.wake.signal;
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
    });
  }
}
