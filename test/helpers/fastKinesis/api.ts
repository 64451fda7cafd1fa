/**
 * The Kinesis operations the spout, its tools and the benchmarks call, over `FastStream`s: a JSON input in
 * (as the AWS SDK's JSON 1.1 protocol sends it: blobs base64, timestamps epoch seconds), a JSON output or a
 * `KinesisFault` out. Stream transitions (create, reshard, delete) take `transitionMs` on timers; Kinesis's
 * per-shard, per-stream and per-account call quotas are enforced over fixed one-second windows when `limits` is on.
 */
import { MAX_HASH, type SimRecord, type SimShard } from '../../sim/kinesis/simStream';
import { FastStream, KinesisFault, StreamStatus, hashKeyOf, invalid } from './stream';

export interface FastKinesisOptions {
  /** How long CREATING, UPDATING (a reshard) and DELETING last, ms. */
  transitionMs: number;
  /** Kinesis's call quotas (GetRecords and GetShardIterator 5/s a shard, ListShards 1,000/s a stream, ...). */
  limits: boolean;
  /** Open shards the account may have (CreateStream and resharding refused with LimitExceeded past it). */
  shardLimit: number;
}

type Json = Record<string, unknown>;

const ITERATOR_LIFETIME_MS = 300_000;
const NEXT_TOKEN_LIFETIME_MS = 300_000;
const MAX_GET_RECORDS_BYTES = 10 * 1024 * 1024;
const MAX_RECORD_BYTES = 1024 * 1024;
/** Calls (or records put) per second, as AWS's API reference gives them. */
const QUOTA = {
  /** A shard. */
  getRecords: 5,
  getShardIterator: 5,
  putRecordsPerShard: 1_000,
  /** A stream. */
  listShards: 1_000,
  /** The account. */
  describeStreamSummary: 20,
  describeStream: 10,
} as const;

const notFound = (message: string) => new KinesisFault('ResourceNotFoundException', message);
const inUse = (message: string) => new KinesisFault('ResourceInUseException', message);

function text(input: Json, key: string): string | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`${key} must be a string`);
  return value;
}

function integer(input: Json, key: string, min: number, max: number): number | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw invalid(`${key} must be an integer from ${min} to ${max}`);
  return value;
}

function hashKey(value: string, key: string): bigint {
  if (!/^\d{1,39}$/.test(value) || BigInt(value) > MAX_HASH) throw invalid(`${key} ${value} is not a hash key`);
  return BigInt(value);
}

function sequenceNumber(value: string): bigint {
  if (!/^\d{1,128}$/.test(value)) throw invalid(`StartingSequenceNumber ${value} is not a sequence number`);
  return BigInt(value);
}

function base64(value: unknown, key: string): Uint8Array {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0)
    throw invalid(`${key} must be base64`);
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length > MAX_RECORD_BYTES) throw invalid(`${key} is ${bytes.length} bytes, more than 1 MiB`);
  return bytes;
}

const seconds = (ms: number) => ms / 1000;

function hashRange(shard: SimShard): Json {
  return { StartingHashKey: shard.startingHashKey.toString(), EndingHashKey: shard.endingHashKey.toString() };
}

function shardOut(shard: SimShard): Json {
  const out: Json = {
    ShardId: shard.shardId,
    HashKeyRange: hashRange(shard),
    SequenceNumberRange: {
      StartingSequenceNumber: shard.startingSequenceNumber,
      ...(shard.endingSequenceNumber !== undefined ? { EndingSequenceNumber: shard.endingSequenceNumber } : {}),
    },
  };
  if (shard.parents[0] !== undefined) out.ParentShardId = shard.parents[0];
  if (shard.parents[1] !== undefined) out.AdjacentParentShardId = shard.parents[1];
  return out;
}

/** What DescribeStream and DescribeStreamSummary both say of a stream. */
function describedStream(stream: FastStream): Json {
  return {
    StreamName: stream.name,
    StreamARN: stream.arn,
    StreamStatus: stream.status,
    StreamModeDetails: { StreamMode: 'PROVISIONED' },
    RetentionPeriodHours: 24,
    StreamCreationTimestamp: seconds(stream.model.createdMs),
    EnhancedMonitoring: [{ ShardLevelMetrics: [] }],
  };
}

function recordOut(record: SimRecord): Json {
  return {
    SequenceNumber: record.sequenceNumber,
    ApproximateArrivalTimestamp: seconds(record.arrivalMs),
    Data: Buffer.from(record.data.buffer, record.data.byteOffset, record.data.byteLength).toString('base64'),
    PartitionKey: record.partitionKey,
  };
}

/** Opaque to the client, as Kinesis's are: base64 of the stream, its generation, the shard, the record index, the time given. */
function encode(parts: (string | number)[]): string {
  return Buffer.from(parts.join('|')).toString('base64');
}

function decode(token: string, fields: number): string[] | undefined {
  const parts = Buffer.from(token, 'base64').toString('utf8').split('|');
  return parts.length === fields ? parts : undefined;
}

/** Counts per key over fixed one-second windows. */
class Quotas {
  private readonly windows = new Map<string, { second: number; count: number }>();

  /** Counts `n` more for `key`; false (nothing counted) when that would pass `limit` this second. */
  take(key: string, limit: number, now: number, n = 1): boolean {
    const second = Math.floor(now / 1000);
    let window = this.windows.get(key);
    if (!window || window.second !== second) {
      window = { second, count: 0 };
      this.windows.set(key, window);
    }
    if (window.count + n > limit) return false;
    window.count += n;
    return true;
  }

  forget(prefix: string): void {
    for (const key of this.windows.keys()) if (key.startsWith(prefix)) this.windows.delete(key);
  }
}

export class FastKinesis {
  private readonly streams = new Map<string, FastStream>();
  private generations = 0;
  private readonly quotas = new Quotas();
  private readonly timers = new Set<NodeJS.Timeout>();
  private unmetered = false;

  constructor(
    private readonly options: FastKinesisOptions,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Answers one operation, or throws a KinesisFault. `unmetered`: not counted against the quotas nor refused
   * by them (a benchmark's own bookkeeping calls, which would otherwise take the quota from the callers it
   * measures).
   */
  handle(operation: string, input: Json, unmetered = false): Json {
    this.unmetered = unmetered;
    switch (operation) {
      case 'CreateStream':
        return this.createStream(input);
      case 'DeleteStream':
        return this.deleteStream(input);
      case 'ListStreams':
        return this.listStreams(input);
      case 'DescribeStreamSummary':
        return this.describeStreamSummary(input);
      case 'DescribeStream':
        return this.describeStream(input);
      case 'ListShards':
        return this.listShards(input);
      case 'GetShardIterator':
        return this.getShardIterator(input);
      case 'GetRecords':
        return this.getRecords(input);
      case 'PutRecord':
        return this.putRecord(input);
      case 'PutRecords':
        return this.putRecords(input);
      case 'UpdateShardCount':
        return this.updateShardCount(input);
      case 'SplitShard':
        return this.splitShard(input);
      case 'MergeShards':
        return this.mergeShards(input);
      default:
        throw new KinesisFault('UnknownOperationException', `this emulator does not answer ${operation}`);
    }
  }

  /** Stops the transitions still pending. */
  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms);
    this.timers.add(timer);
  }

  private get metered(): boolean {
    return this.options.limits && !this.unmetered;
  }

  /** True when `n` more calls (or records) under `key` fit its quota this second (counted), or nothing is metered. */
  private within(key: string, limit: number, n = 1): boolean {
    return !this.metered || this.quotas.take(key, limit, this.clock(), n);
  }

  private throttle(key: string, limit: number, what: string, type = 'LimitExceededException', n = 1): void {
    if (!this.within(key, limit, n)) throw new KinesisFault(type, `Rate exceeded for ${what}`);
  }

  /** The stream a request names (StreamName or StreamARN, or both if they agree), in any status. */
  private named(input: Json): FastStream {
    const name = text(input, 'StreamName');
    const arn = text(input, 'StreamARN');
    if (name === undefined && arn === undefined) throw invalid('StreamName or StreamARN is required');
    const byArn = arn === undefined ? undefined : /^arn:aws:kinesis:[^:]*:\d{12}:stream\/(.+)$/.exec(arn)?.[1];
    if (arn !== undefined && byArn === undefined) throw invalid(`StreamARN ${arn} is not a stream ARN`);
    if (name !== undefined && byArn !== undefined && name !== byArn)
      throw invalid(`StreamName ${name} and StreamARN ${arn} name different streams`);
    const stream = this.streams.get((name ?? byArn)!);
    if (!stream || (arn !== undefined && stream.arn !== arn))
      throw notFound(`Stream ${name ?? arn} under account 000000000000 not found.`);
    return stream;
  }

  /** A stream that can be read and written (ACTIVE or UPDATING). */
  private usable(input: Json): FastStream {
    const stream = this.named(input);
    if (stream.status === StreamStatus.Creating || stream.status === StreamStatus.Deleting)
      throw notFound(`Stream ${stream.name} under account 000000000000 not found (it is ${stream.status}).`);
    return stream;
  }

  private shardOf(stream: FastStream, shardId: string | undefined): SimShard {
    if (shardId === undefined) throw invalid('ShardId is required');
    const shard = stream.shard(shardId);
    if (!shard) throw notFound(`Shard ${shardId} in stream ${stream.name} under account 000000000000 does not exist`);
    return shard;
  }

  private checkShardLimit(more: number): void {
    let open = 0;
    for (const stream of this.streams.values()) open += stream.openCount;
    if (open + more > this.options.shardLimit)
      throw new KinesisFault(
        'LimitExceededException',
        `This request would exceed the shard limit for the account 000000000000 in us-east-1. Current limit of shards is ${this.options.shardLimit}.`,
      );
  }

  private createStream(input: Json): Json {
    const name = text(input, 'StreamName');
    if (name === undefined || !/^[a-zA-Z0-9_.-]{1,128}$/.test(name)) throw invalid(`StreamName ${name} is not valid`);
    const mode = (input.StreamModeDetails as Json | undefined)?.StreamMode;
    const count = integer(input, 'ShardCount', 1, 100_000) ?? (mode === 'ON_DEMAND' ? 4 : undefined);
    if (count === undefined) throw invalid('ShardCount is required');
    if (this.streams.has(name)) throw inUse(`Stream ${name} under account 000000000000 already exists.`);
    this.checkShardLimit(count);
    const stream = new FastStream(name, count, ++this.generations, this.clock);
    this.streams.set(name, stream);
    this.later(this.options.transitionMs, () => (stream.status = StreamStatus.Active));
    return {};
  }

  private deleteStream(input: Json): Json {
    const stream = this.named(input);
    stream.status = StreamStatus.Deleting;
    this.later(this.options.transitionMs, () => {
      if (this.streams.get(stream.name) === stream) this.streams.delete(stream.name);
      this.quotas.forget(`${stream.generation}:`);
    });
    return {};
  }

  private listStreams(input: Json): Json {
    const limit = integer(input, 'Limit', 1, 10_000) ?? 100;
    const after = text(input, 'ExclusiveStartStreamName');
    const names = [...this.streams.keys()].sort().filter((n) => after === undefined || n > after);
    const page = names.slice(0, limit);
    return {
      StreamNames: page,
      HasMoreStreams: names.length > page.length,
      StreamSummaries: page.map((n) => {
        const s = this.streams.get(n)!;
        return {
          StreamName: s.name,
          StreamARN: s.arn,
          StreamStatus: s.status,
          StreamModeDetails: { StreamMode: 'PROVISIONED' },
          StreamCreationTimestamp: seconds(s.model.createdMs),
        };
      }),
    };
  }

  private describeStreamSummary(input: Json): Json {
    const stream = this.named(input);
    this.throttle('summary', QUOTA.describeStreamSummary, 'DescribeStreamSummary');
    return {
      StreamDescriptionSummary: {
        ...describedStream(stream),
        EncryptionType: 'NONE',
        OpenShardCount: stream.openCount,
        ConsumerCount: 0,
      },
    };
  }

  private describeStream(input: Json): Json {
    const stream = this.named(input);
    this.throttle('describeStream', QUOTA.describeStream, 'DescribeStream');
    const limit = integer(input, 'Limit', 1, 10_000) ?? 100;
    const after = text(input, 'ExclusiveStartShardId');
    const from = after === undefined ? 0 : stream.indexAfter(after);
    const page = stream.shards.slice(from, from + limit);
    return {
      StreamDescription: {
        ...describedStream(stream),
        Shards: page.map(shardOut),
        HasMoreShards: from + page.length < stream.shards.length,
        EncryptionType: 'NONE',
      },
    };
  }

  /**
   * Paged by position in id order. ShardFilter: AFTER_SHARD_ID, AT_LATEST (open shards), FROM_TRIM_HORIZON
   * (every shard: nothing expires here) and AT_TRIM_HORIZON (the shards open at the trim horizon: nothing
   * expires, so the stream's first ones, those without parents; KCL 2.x lists so from TRIM_HORIZON); the
   * others are refused as unsupported.
   */
  private listShards(input: Json): Json {
    const limit = integer(input, 'MaxResults', 1, 10_000) ?? 1_000;
    let stream: FastStream;
    let from: number;
    let only: '' | 'AT_LATEST' | 'AT_TRIM_HORIZON' = '';
    const token = text(input, 'NextToken');
    if (token !== undefined) {
      if (
        input.StreamName != null ||
        input.StreamARN != null ||
        input.ExclusiveStartShardId != null ||
        input.ShardFilter != null
      )
        throw invalid('NextToken cannot be given with StreamName, StreamARN, ExclusiveStartShardId or ShardFilter');
      const parts = decode(token, 5);
      if (!parts) throw invalid(`NextToken ${token} is not valid`);
      const [name, generation, index, filter, issued] = parts;
      if (this.clock() - Number(issued) > NEXT_TOKEN_LIFETIME_MS)
        throw new KinesisFault('ExpiredNextTokenException', 'The NextToken has expired');
      const named = this.streams.get(name);
      if (!named || String(named.generation) !== generation) throw notFound(`Stream ${name} not found.`);
      stream = named;
      from = Number(index);
      only = filter === 'AT_LATEST' || filter === 'AT_TRIM_HORIZON' ? filter : '';
    } else {
      stream = this.named(input);
      if (stream.status === StreamStatus.Creating || stream.status === StreamStatus.Deleting)
        throw inUse(`Stream ${stream.name} is ${stream.status}`);
      const after = text(input, 'ExclusiveStartShardId');
      from = after === undefined ? 0 : stream.indexAfter(after);
      const filter = input.ShardFilter as Json | undefined;
      if (filter != null) {
        if (after !== undefined) throw invalid('ExclusiveStartShardId cannot be given with ShardFilter');
        const type = text(filter, 'Type');
        if (type === 'AFTER_SHARD_ID') {
          const id = text(filter, 'ShardId');
          if (id === undefined) throw invalid('ShardFilter AFTER_SHARD_ID needs a ShardId');
          from = stream.indexAfter(id);
        } else if (type === 'AT_LATEST' || type === 'AT_TRIM_HORIZON') only = type;
        else if (type !== 'FROM_TRIM_HORIZON') throw invalid(`ShardFilter ${type} is not supported by this emulator`);
      }
    }
    this.throttle(`${stream.generation}:list`, QUOTA.listShards, 'ListShards');
    const page: SimShard[] = [];
    let i = from;
    for (; i < stream.shards.length && page.length < Math.min(limit, 1_000); i += 1) {
      const shard = stream.shards[i];
      if (only === 'AT_LATEST' ? shard.endingSequenceNumber === undefined : only === '' || shard.parents.length === 0)
        page.push(shard);
    }
    const out: Json = { Shards: page.map(shardOut) };
    if (i < stream.shards.length) out.NextToken = encode([stream.name, stream.generation, i, only, this.clock()]);
    return out;
  }

  private getShardIterator(input: Json): Json {
    const stream = this.usable(input);
    const shard = this.shardOf(stream, text(input, 'ShardId'));
    this.throttle(
      `${stream.generation}:iterator:${shard.shardId}`,
      QUOTA.getShardIterator,
      `GetShardIterator on ${shard.shardId}`,
      'ProvisionedThroughputExceededException',
    );
    const type = text(input, 'ShardIteratorType');
    const starting = text(input, 'StartingSequenceNumber');
    let index: number;
    switch (type) {
      case 'TRIM_HORIZON':
        index = 0;
        break;
      case 'LATEST':
        index = shard.records.length;
        break;
      case 'AT_SEQUENCE_NUMBER':
      case 'AFTER_SEQUENCE_NUMBER': {
        if (starting === undefined) throw invalid(`StartingSequenceNumber is required with ${type}`);
        const at = sequenceNumber(starting);
        if (!stream.owns(shard, at))
          throw invalid(
            `StartingSequenceNumber ${starting} used in GetShardIterator on shard ${shard.shardId} in stream ${stream.name} under account 000000000000 is invalid because it did not come from this stream.`,
          );
        index = stream.recordIndex(shard, at, type === 'AT_SEQUENCE_NUMBER');
        break;
      }
      case 'AT_TIMESTAMP': {
        const timestamp = input.Timestamp;
        if (typeof timestamp !== 'number' || !Number.isFinite(timestamp))
          throw invalid('Timestamp (epoch seconds) is required with AT_TIMESTAMP');
        index = stream.timeIndex(shard, timestamp * 1000);
        break;
      }
      default:
        throw invalid(`ShardIteratorType ${type} is not valid`);
    }
    if (starting !== undefined && type !== 'AT_SEQUENCE_NUMBER' && type !== 'AFTER_SEQUENCE_NUMBER')
      throw invalid(`StartingSequenceNumber is not allowed with ${type}`);
    return { ShardIterator: this.iterator(stream, shard, index) };
  }

  private iterator(stream: FastStream, shard: SimShard, index: number): string {
    return encode([stream.name, stream.generation, shard.shardId, index, this.clock()]);
  }

  private getRecords(input: Json): Json {
    const iterator = text(input, 'ShardIterator');
    if (iterator === undefined) throw invalid('ShardIterator is required');
    const parts = decode(iterator, 5);
    if (!parts || !/^\d+$/.test(parts[3]) || !/^\d+$/.test(parts[4]))
      throw invalid(`ShardIterator ${iterator} is not valid`);
    const [name, generation, shardId, at, issued] = parts;
    const limit = integer(input, 'Limit', 1, 10_000) ?? 10_000;
    const stream = this.streams.get(name);
    if (!stream || String(stream.generation) !== generation || stream.status === StreamStatus.Deleting)
      throw notFound(`Stream ${name} under account 000000000000 not found.`);
    const arn = text(input, 'StreamARN');
    if (arn !== undefined && arn !== stream.arn) throw invalid(`StreamARN ${arn} is not the iterator's stream`);
    const shard = this.shardOf(stream, shardId);
    const now = this.clock();
    if (now - Number(issued) > ITERATOR_LIFETIME_MS)
      throw new KinesisFault(
        'ExpiredIteratorException',
        `Iterator expired. The iterator was created at time ${new Date(Number(issued)).toUTCString()} while right now it is ${new Date(now).toUTCString()} which is further in the future than the tolerated delay of ${ITERATOR_LIFETIME_MS} milliseconds.`,
      );
    this.throttle(
      `${stream.generation}:read:${shard.shardId}`,
      QUOTA.getRecords,
      `shard ${shard.shardId} in stream ${stream.name} under account 000000000000`,
      'ProvisionedThroughputExceededException',
    );
    const from = Number(at);
    const records: Json[] = [];
    let bytes = 0;
    let next = from;
    while (next < shard.records.length && records.length < limit) {
      const record = shard.records[next];
      bytes += record.data.byteLength + record.partitionKey.length;
      if (records.length > 0 && bytes > MAX_GET_RECORDS_BYTES) break;
      records.push(recordOut(record));
      next += 1;
    }
    const caughtUp = next >= shard.records.length;
    const out: Json = {
      Records: records,
      MillisBehindLatest: caughtUp ? 0 : Math.max(0, now - shard.records[next].arrivalMs),
    };
    // A closed shard read to its end: no next iterator, and its children named.
    if (shard.endingSequenceNumber !== undefined && caughtUp) {
      out.ChildShards = shard.children.map((id) => {
        const child = stream.shard(id)!;
        return { ShardId: id, ParentShards: child.parents, HashKeyRange: hashRange(child) };
      });
    } else out.NextShardIterator = this.iterator(stream, shard, next);
    return out;
  }

  /** One entry of PutRecord(s), validated; undefined when its shard's put quota is spent this second. */
  private putOne(stream: FastStream, entry: Json): SimRecord | undefined {
    const partitionKey = text(entry, 'PartitionKey');
    if (partitionKey === undefined || partitionKey.length < 1 || partitionKey.length > 256)
      throw invalid('PartitionKey must be 1 to 256 characters');
    const data = base64(entry.Data, 'Data');
    const explicit = text(entry, 'ExplicitHashKey');
    const shard = stream.route(explicit === undefined ? hashKeyOf(partitionKey) : hashKey(explicit, 'ExplicitHashKey'));
    if (!this.within(`${stream.generation}:put:${shard.shardId}`, QUOTA.putRecordsPerShard)) return undefined;
    return stream.model.append(shard, partitionKey, data);
  }

  private putRecord(input: Json): Json {
    const stream = this.usable(input);
    const record = this.putOne(stream, input);
    if (!record)
      throw new KinesisFault(
        'ProvisionedThroughputExceededException',
        `Rate exceeded for shard in stream ${stream.name}`,
      );
    return { ShardId: record.shardId, SequenceNumber: record.sequenceNumber, EncryptionType: 'NONE' };
  }

  /** Every entry is validated before any is stored: a bad one refuses the whole call, as Kinesis does. */
  private putRecords(input: Json): Json {
    const stream = this.usable(input);
    const entries = input.Records;
    if (!Array.isArray(entries) || entries.length < 1 || entries.length > 500)
      throw invalid('Records must hold 1 to 500 entries');
    for (const entry of entries) {
      if (typeof entry !== 'object' || entry === null) throw invalid('Records must hold objects');
      const key = text(entry as Json, 'PartitionKey');
      if (key === undefined || key.length < 1 || key.length > 256)
        throw invalid('PartitionKey must be 1 to 256 characters');
      base64((entry as Json).Data, 'Data');
      const explicit = text(entry as Json, 'ExplicitHashKey');
      if (explicit !== undefined) hashKey(explicit, 'ExplicitHashKey');
    }
    let failed = 0;
    const results = entries.map((entry: Json) => {
      const record = this.putOne(stream, entry);
      if (record) return { ShardId: record.shardId, SequenceNumber: record.sequenceNumber };
      failed += 1;
      return {
        ErrorCode: 'ProvisionedThroughputExceededException',
        ErrorMessage: `Rate exceeded for shard in stream ${stream.name} under account 000000000000.`,
      };
    });
    return { FailedRecordCount: failed, Records: results, EncryptionType: 'NONE' };
  }

  /** A reshard: ResourceInUse unless ACTIVE; UPDATING for `transitionMs`, then `apply` and ACTIVE. */
  private reshard(stream: FastStream, apply: () => void): void {
    if (stream.status !== StreamStatus.Active)
      throw inUse(`Stream ${stream.name} under account 000000000000 not ACTIVE, instead in state ${stream.status}`);
    stream.status = StreamStatus.Updating;
    this.later(this.options.transitionMs, () => {
      apply();
      stream.status = StreamStatus.Active;
    });
  }

  private updateShardCount(input: Json): Json {
    const stream = this.named(input);
    const target = integer(input, 'TargetShardCount', 1, 100_000);
    if (target === undefined) throw invalid('TargetShardCount is required');
    if (text(input, 'ScalingType') !== 'UNIFORM_SCALING') throw invalid('ScalingType must be UNIFORM_SCALING');
    const current = stream.openCount;
    if (target > 2 * current || target < Math.ceil(current / 2))
      throw invalid(`TargetShardCount ${target} is more than double or less than half the ${current} open shards`);
    if (target > current) this.checkShardLimit(target - current);
    this.reshard(stream, () => stream.scaleTo(target));
    return { StreamName: stream.name, StreamARN: stream.arn, CurrentShardCount: current, TargetShardCount: target };
  }

  private splitShard(input: Json): Json {
    const stream = this.named(input);
    const shard = this.shardOf(stream, text(input, 'ShardToSplit'));
    const key = text(input, 'NewStartingHashKey');
    if (key === undefined) throw invalid('NewStartingHashKey is required');
    const at = hashKey(key, 'NewStartingHashKey');
    if (shard.endingSequenceNumber !== undefined) throw invalid(`Shard ${shard.shardId} is closed`);
    if (at <= shard.startingHashKey || at > shard.endingHashKey)
      throw invalid(`NewStartingHashKey ${key} is not inside the hash range of ${shard.shardId}`);
    this.checkShardLimit(1);
    this.reshard(stream, () => stream.split(shard, at));
    return {};
  }

  private mergeShards(input: Json): Json {
    const stream = this.named(input);
    const shard = this.shardOf(stream, text(input, 'ShardToMerge'));
    const adjacent = this.shardOf(stream, text(input, 'AdjacentShardToMerge'));
    if (shard.endingSequenceNumber !== undefined || adjacent.endingSequenceNumber !== undefined)
      throw invalid(`Shards ${shard.shardId} and ${adjacent.shardId} must both be open`);
    if (shard.endingHashKey + 1n !== adjacent.startingHashKey && adjacent.endingHashKey + 1n !== shard.startingHashKey)
      throw invalid(`Shards ${shard.shardId} and ${adjacent.shardId} are not adjacent`);
    this.reshard(stream, () => stream.merge(shard, adjacent));
    return {};
  }
}
