/**
 * The Kinesis API over a `SimStream`, as the spout calls it (`send(command, { abortSignal })`): ListShards
 * (paged), DescribeStreamSummary, GetShardIterator (TRIM_HORIZON, AFTER/AT_SEQUENCE_NUMBER, AT_TIMESTAMP,
 * LATEST) and GetRecords (ChildShards and no next iterator at a closed shard's end; MillisBehindLatest).
 * Each reply comes after a seeded delay on the caller's timers; the fault plan may answer instead with
 * throttling, an expired iterator, a transient ResourceNotFound for a shard that exists, or a 500.
 */
import {
  DescribeStreamSummaryCommand,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  InvalidArgumentException,
  KinesisServiceException,
  LimitExceededException,
  ListShardsCommand,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
  type GetRecordsCommandInput,
  type GetShardIteratorCommandInput,
  type ListShardsCommandInput,
  type Shard,
} from '@aws-sdk/client-kinesis';
import type { KinesisApi } from '../../../src/kinesis/client';
import type { KinesisFaults } from '../faults';
import type { Random } from '../random';
import type { Owner, SimLoop } from '../virtualTime';
import type { SimShard, SimStream } from './simStream';

const $metadata = { httpStatusCode: 400 };

function notFound(what: string): ResourceNotFoundException {
  return new ResourceNotFoundException({ message: `${what} not found`, $metadata });
}

function invalid(message: string): InvalidArgumentException {
  return new InvalidArgumentException({ message, $metadata });
}

export interface KinesisCalls {
  total: number;
  faults: number;
}

export class SimKinesis {
  readonly calls: KinesisCalls = { total: 0, faults: 0 };
  /**
   * Longest ListShards page: 1–4 shards (drawn) by default, so listings page often; the scale benchmark
   * sets Kinesis's 1,000. The draw is made either way, so a seed replays the same run.
   */
  maxPageSize = 4;

  constructor(
    private readonly loop: SimLoop,
    private readonly stream: SimStream,
    private readonly faults: KinesisFaults,
    /** Shape choices that are not faults: page sizes, where a closed shard's end is reported. */
    private readonly rng: Random,
    private readonly trace: (who: string, what: string) => void,
  ) {}

  /** The client one process uses: its replies run on that process's timers (frozen while it is paused). */
  clientFor(owner: Owner): KinesisApi {
    const send = (command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown> =>
      new Promise((resolve, reject) => {
        const signal = options?.abortSignal;
        const abortError = () => Object.assign(new Error('Request aborted'), { name: 'AbortError' });
        if (signal?.aborted) return this.loop.after(owner, 0, () => reject(abortError()));
        this.calls.total += 1;
        let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
        try {
          outcome = { ok: true, value: this.answer(command, owner.name) };
        } catch (error) {
          outcome = { ok: false, error };
        }
        const cancel = this.loop.after(owner, this.faults.kinesisDelay(), () => {
          signal?.removeEventListener('abort', onAbort);
          if (outcome.ok) resolve(outcome.value);
          else reject(outcome.error);
        });
        const onAbort = () => {
          cancel();
          this.loop.after(owner, 0, () => reject(abortError()));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    return { send } as unknown as KinesisApi;
  }

  private answer(command: unknown, who: string): unknown {
    const name = commandName(command);
    const fault = this.faults.kinesisRequest(name);
    const input = (command as { input: Record<string, unknown> }).input;
    if (fault !== 'none') {
      this.calls.faults += 1;
      const shard =
        typeof input.ShardId === 'string'
          ? input.ShardId
          : typeof input.ShardIterator === 'string'
            ? String(input.ShardIterator).split(':')[1]
            : '';
      this.trace(who, `kinesis ${name} ${shard}: fault ${fault}`);
      switch (fault) {
        case 'throttled':
          throw name === 'ListShards' || name === 'DescribeStreamSummary'
            ? new LimitExceededException({ message: 'Rate exceeded', $metadata })
            : new ProvisionedThroughputExceededException({ message: 'Rate exceeded for shard', $metadata });
        case 'expired-iterator':
          throw new ExpiredIteratorException({ message: 'Iterator expired', $metadata });
        case 'not-found':
          throw notFound(`Shard ${shard} in stream ${this.stream.streamName}`);
        case 'internal-failure':
          throw new KinesisServiceException({
            name: 'InternalFailure',
            $fault: 'server',
            message: 'We encountered an internal error. Please try again.',
            $metadata: { httpStatusCode: 500 },
          });
      }
    }
    if (command instanceof ListShardsCommand) return this.listShards(command.input);
    if (command instanceof DescribeStreamSummaryCommand) {
      this.checkStream(command.input);
      return {
        StreamDescriptionSummary: {
          StreamName: this.stream.streamName,
          StreamARN: this.stream.streamArn,
          StreamStatus: 'ACTIVE',
          StreamCreationTimestamp: new Date(this.stream.createdMs),
          OpenShardCount: this.stream.open().length,
        },
      };
    }
    if (command instanceof GetShardIteratorCommand) return this.getShardIterator(command.input);
    if (command instanceof GetRecordsCommand) return this.getRecords(command.input);
    throw invalid(`the simulated Kinesis does not answer ${name}`);
  }

  private checkStream(input: { StreamName?: string; StreamARN?: string }): void {
    if (input.StreamName !== undefined && input.StreamARN !== undefined)
      throw invalid('give StreamName or StreamARN, not both');
    if (input.StreamName === undefined && input.StreamARN === undefined)
      throw invalid('StreamName or StreamARN is required');
    if (
      (input.StreamName ?? this.stream.streamName) !== this.stream.streamName ||
      (input.StreamARN ?? this.stream.streamArn) !== this.stream.streamArn
    ) {
      throw notFound(`Stream ${input.StreamName ?? input.StreamARN}`);
    }
  }

  private listShards(input: ListShardsCommandInput): unknown {
    let offset = 0;
    let after: string | undefined;
    if (input.NextToken !== undefined) {
      if (
        input.StreamName !== undefined ||
        input.StreamARN !== undefined ||
        input.ExclusiveStartShardId !== undefined
      ) {
        throw invalid('NextToken cannot be given with StreamName, StreamARN or ExclusiveStartShardId');
      }
      const [, from, start] = input.NextToken.split('|');
      offset = Number(from);
      after = start === '' ? undefined : start;
    } else {
      this.checkStream(input);
      after = input.ExclusiveStartShardId;
    }
    const ids = [...this.stream.shards.keys()].sort().filter((id) => after === undefined || id > after);
    const drawn = this.rng.int(1, 4);
    const pageSize = Math.min(input.MaxResults ?? 1000, this.maxPageSize > 4 ? this.maxPageSize : drawn);
    const page = ids.slice(offset, offset + pageSize);
    const more = offset + pageSize < ids.length;
    return {
      Shards: page.map((id) => toShard(this.stream.shards.get(id)!)),
      NextToken: more ? `page|${offset + pageSize}|${after ?? ''}` : undefined,
    };
  }

  private shard(id: string | undefined): SimShard {
    const shard = id === undefined ? undefined : this.stream.shards.get(id);
    if (!shard) throw notFound(`Shard ${id} in stream ${this.stream.streamName}`);
    return shard;
  }

  private getShardIterator(input: GetShardIteratorCommandInput): unknown {
    this.checkStream(input);
    const shard = this.shard(input.ShardId);
    const records = shard.records;
    let index: number;
    switch (input.ShardIteratorType) {
      case 'TRIM_HORIZON':
        index = 0;
        break;
      case 'LATEST':
        index = records.length;
        break;
      case 'AT_SEQUENCE_NUMBER':
      case 'AFTER_SEQUENCE_NUMBER': {
        if (input.StartingSequenceNumber === undefined) throw invalid('StartingSequenceNumber is required');
        const from = BigInt(input.StartingSequenceNumber);
        const inclusive = input.ShardIteratorType === 'AT_SEQUENCE_NUMBER';
        index = records.findIndex((r) =>
          inclusive ? BigInt(r.sequenceNumber) >= from : BigInt(r.sequenceNumber) > from,
        );
        if (index < 0) index = records.length;
        break;
      }
      case 'AT_TIMESTAMP': {
        if (!(input.Timestamp instanceof Date)) throw invalid('Timestamp is required');
        const at = input.Timestamp.getTime();
        index = records.findIndex((r) => r.arrivalMs >= at);
        if (index < 0) index = records.length;
        break;
      }
      default:
        throw invalid(`ShardIteratorType ${String(input.ShardIteratorType)}`);
    }
    return { ShardIterator: `it:${shard.shardId}:${index}` };
  }

  private getRecords(input: GetRecordsCommandInput): unknown {
    const [kind, shardId, from] = (input.ShardIterator ?? '').split(':');
    if (kind !== 'it' || shardId === undefined || from === undefined)
      throw invalid(`bad iterator ${input.ShardIterator}`);
    const shard = this.shard(shardId);
    const index = Number(from);
    const limit = input.Limit ?? 10_000;
    const records = shard.records.slice(index, index + limit);
    const next = index + records.length;
    const closed = shard.endingSequenceNumber !== undefined;
    const caughtUp = next >= shard.records.length;
    // A closed shard's last records come with no next iterator, or with one that then returns nothing.
    const ended = closed && caughtUp && (records.length === 0 || this.rng.chance(0.5));
    const behind = caughtUp ? 0 : Math.max(1, this.stream.wallNow() - shard.records[next].arrivalMs);
    return {
      Records: records.map((r) => ({
        SequenceNumber: r.sequenceNumber,
        PartitionKey: r.partitionKey,
        Data: r.data,
        ApproximateArrivalTimestamp: new Date(r.arrivalMs),
      })),
      NextShardIterator: ended ? undefined : `it:${shard.shardId}:${next}`,
      MillisBehindLatest: behind,
      // Emulators may leave ChildShards out: the spout must find children by listing.
      ChildShards:
        ended && this.rng.chance(0.7)
          ? shard.children.map((id) => ({
              ShardId: id,
              ParentShards: this.stream.shards.get(id)!.parents,
              HashKeyRange: hashRange(this.stream.shards.get(id)!),
            }))
          : undefined,
    };
  }
}

function commandName(command: unknown): string {
  return (command as { constructor: { name: string } }).constructor.name.replace(/Command$/, '');
}

function hashRange(shard: SimShard): { StartingHashKey: string; EndingHashKey: string } {
  return { StartingHashKey: shard.startingHashKey.toString(), EndingHashKey: shard.endingHashKey.toString() };
}

function toShard(shard: SimShard): Shard {
  return {
    ShardId: shard.shardId,
    ParentShardId: shard.parents[0],
    AdjacentParentShardId: shard.parents[1],
    HashKeyRange: hashRange(shard),
    SequenceNumberRange: {
      StartingSequenceNumber: shard.startingSequenceNumber,
      EndingSequenceNumber: shard.endingSequenceNumber,
    },
  };
}
