/**
 * The configuration's JSON Schema: the validator and the documentation (docs/configuration.md's table is
 * generated from the descriptions and defaults here by `npm run docs:config`; links in a description are
 * relative to docs/).
 */
import { DATA_FORMATS, TUPLE_FIELDS, type TupleField } from '../core/tuple';
import { REGION_PATTERN } from './region';

/** What the spout does with a record failed more often than `retry.maxRetries` allows. */
export const OnExhausted = { Skip: 'skip', DeadLetter: 'deadLetter' } as const;
export type OnExhausted = (typeof OnExhausted)[keyof typeof OnExhausted];
const ON_EXHAUSTED = Object.values(OnExhausted);

/** Fields a dead letter carries after the output fields: failures so far, and when the last one came (epoch ms). */
export const DEAD_LETTER_FIELDS = ['attempts', 'lastFailureTime'] as const;

/** With `maxRecordAgeMs` set, a dead letter also says why it was set aside (`maxRetries` or `tooOld`) and its age then. */
export const DEAD_LETTER_REASON_FIELDS = ['reason', 'ageMs'] as const;

/** Kinesis keeps records at most 365 days: a longer age limit could never apply. */
const MAX_RETENTION_MS = 365 * 86_400_000;

/** What a dead letter carries after the output fields. */
export function deadLetterExtraFields(config: { maxRecordAgeMs?: number }): readonly string[] {
  return config.maxRecordAgeMs === undefined
    ? DEAD_LETTER_FIELDS
    : [...DEAD_LETTER_FIELDS, ...DEAD_LETTER_REASON_FIELDS];
}

/**
 * Finite, so that a record a bolt can never process (a poison record) holds its shard back for under an hour
 * (23 to 46 minutes of back-off at the default delays), not until the records behind it pass the stream's
 * retention; long enough to ride out a bolt's restart or a short outage downstream. See "Retries and dead
 * letters" in docs/topology.md.
 */
export const DEFAULT_MAX_RETRIES = 100;

/**
 * 1,000 periodic checkpoint writes a second for the whole application: 2,000 busy shards at the default
 * `checkpointIntervalMs` (2 s) write as before, twice the 1,024 measured; 4,096 to 20,000 busy shards would
 * otherwise send an ensemble 2,048 to 10,000 writes a second, each a leader proposal synced to disk by a
 * quorum. See "Connections and load" in docs/zookeeper.md.
 */
export const DEFAULT_MAX_CHECKPOINT_WRITES_PER_SECOND = 1_000;

export const DEFAULT_OUTPUT_FIELDS: TupleField[] = [
  'partitionKey',
  'data',
  'shardId',
  'sequenceNumber',
  'arrivalTimestamp',
];

const positiveMs = (description: string, defaultValue: number, minimum = 1) =>
  ({ type: 'integer', minimum, maximum: 86_400_000, default: defaultValue, description }) as const;

const STREAM_NAME = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[a-zA-Z0-9_.-]+$',
  description: 'Kinesis stream to read (or give `streamArn`, or several streams in `streams`).',
} as const;

const STREAM_ARN = {
  type: 'string',
  pattern: '^arn:aws[a-z-]*:kinesis:[a-z0-9-]+:[0-9]{12}:stream/[a-zA-Z0-9_.-]+$',
  description: 'Stream ARN, instead of `streamName`.',
} as const;

const REGION = {
  type: 'string',
  // A region's shape (region.ts): a typo fails here, not every call later; an unknown name is warned about.
  pattern: REGION_PATTERN,
  description:
    'AWS region of the stream: words and a number joined by dashes (`us-east-1`, `eu-central-2`, `us-gov-west-1`); a well-formed name this version does not know is logged as a warning at start.',
} as const;

const CONSUMER_ARN = {
  type: 'string',
  pattern: '^arn:aws[a-z-]*:kinesis:[a-z0-9-]+:[0-9]{12}:stream/[a-zA-Z0-9_.-]+/consumer/[a-zA-Z0-9_.-]+:[0-9]+$',
  description:
    'With `readMode: "fanOut"`: a consumer the operator registered and manages; the spout only describes it (`DescribeStreamConsumer`) and never registers one. Instead of `consumerName`.',
} as const;

const INITIAL_POSITION = {
  description:
    'Where shards open at the application\'s first start begin: `LATEST` (the first start time, recorded once), `TRIM_HORIZON`, or `{"atTimestamp": ISO-8601}`.',
  default: 'LATEST',
  oneOf: [
    { type: 'string', enum: ['LATEST', 'TRIM_HORIZON'] },
    {
      type: 'object',
      additionalProperties: false,
      required: ['atTimestamp'],
      properties: { atTimestamp: { type: 'string', minLength: 1 } },
    },
  ],
} as const;

/**
 * How ajv reads the schema: the defaults filled in, the first error only (one message names one key). The
 * validator compiled at run time (schemaValidator.ts) and the one the build generates both use these.
 */
export const configSchemaOptions = { useDefaults: true, allErrors: false, strict: false } as const;

export const configSchema = {
  $id: 'kinesis.spout',
  type: 'object',
  additionalProperties: false,
  required: ['region'],
  oneOf: [{ required: ['streamName'] }, { required: ['streamArn'] }, { required: ['streams'] }],
  properties: {
    streamName: STREAM_NAME,
    streamArn: STREAM_ARN,
    streams: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        oneOf: [{ required: ['streamName'] }, { required: ['streamArn'] }],
        properties: {
          streamName: STREAM_NAME,
          streamArn: STREAM_ARN,
          region: { ...REGION, description: 'Region of this stream. Default: the top-level `region`.' },
          initialPosition: {
            description:
              'Where the shards of this stream open at its first start begin. Default: the top-level `initialPosition`.',
            oneOf: INITIAL_POSITION.oneOf,
          },
          outputStream: {
            type: 'string',
            minLength: 1,
            description: "Storm stream this stream's tuples are emitted on. Default: the top-level `outputStream`.",
          },
          consumerArn: {
            ...CONSUMER_ARN,
            description: 'With `readMode: "fanOut"`: the operator-managed consumer of this stream (see `consumerArn`).',
          },
        },
      },
      description:
        'Several Kinesis streams read by one spout component, instead of `streamName`/`streamArn`: `[{"streamName": "a"}, {"streamArn": "arn:...", "region": "eu-west-1", "initialPosition": "TRIM_HORIZON", "outputStream": "b"}]`. An entry names its stream (`streamName` or `streamArn`) and may set `region`, `initialPosition`, `outputStream` and `consumerArn`, whose top-level values are the defaults; every other key applies to all streams. Each stream keeps its state under `<root>/<applicationName>/<streamName>/` (so names must differ) and its shards are shared among the tasks on their own; the memory caps are split evenly between the streams (see [Several streams](topology.md#several-streams)).',
    },
    region: REGION,
    endpoint: {
      type: 'string',
      pattern: '^https?://',
      description: "Kinesis endpoint override (emulators, VPC endpoints). Default: the region's endpoint.",
    },
    assumeRoleArn: {
      type: 'string',
      pattern: '^arn:aws[a-z-]*:iam::[0-9]{12}:role/',
      description: 'Role to assume on top of the default credential chain. Default: none.',
    },
    fastGetRecords: {
      type: 'boolean',
      default: true,
      description:
        "Read GetRecords answers with the spout's own parser of the one shape Kinesis sends (JSON.parse and base64) instead of the AWS SDK's JSON deserializer, which costs several times more CPU per record; and send each GetRecords on a lean path, signed by the spout with a signing key derived once a day and written whole on the process's own keep-alive sockets for it (at most 16), without the SDK's per-call middleware (endpoint, credentials, clock offset and retry quota stay the SDK client's). Every error answer, network failure and answer not of that shape is handed to the SDK as its own first attempt, so errors and retries are the SDK's. `false`: the SDK sends and reads every call.",
    },
    applicationName: {
      type: 'string',
      minLength: 1,
      pattern: '^[a-zA-Z0-9_.-]+$',
      description:
        'Namespaces checkpoints in ZooKeeper: where the data goes. Default: the topology name (`topology.name`), with a warning: a renamed topology then starts over, and two spout components on one stream split its shards. Set it.',
    },
    readMode: {
      type: 'string',
      enum: ['polling', 'fanOut'],
      default: 'polling',
      description:
        "`polling`: `GetRecords`, sharing each shard's 5 calls/s and 2 MB/s with every other application polling the stream. `fanOut`: enhanced fan-out (`SubscribeToShard` over HTTP/2), its own 2 MB/s per shard through a registered stream consumer (see `consumerName`, `consumerArn`); AWS charges per consumer-shard hour and per GB read.",
    },
    consumerName: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      pattern: '^[a-zA-Z0-9_.-]+$',
      description:
        'With `readMode: "fanOut"`: the stream consumer the spout registers (`RegisterStreamConsumer`, once, by whichever task starts first) and waits for until it is `ACTIVE`; never deregistered by the spout (the tool `deregister-consumer` does it when told: `java -jar kinesis-shell-spout-0.1.0.jar deregister-consumer --config spout.json`). Default: `applicationName`.',
    },
    consumerArn: CONSUMER_ARN,
    initialPosition: INITIAL_POSITION,
    outputFields: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', enum: [...TUPLE_FIELDS] },
      default: [...DEFAULT_OUTPUT_FIELDS],
      description:
        "Tuple fields, in order; must equal the fields the topology declares for the spout. `subSequence` (not in the default) is a KPL user record's index in its aggregate, null for a plain record.",
    },
    outputStream: {
      type: 'string',
      minLength: 1,
      default: 'default',
      description: 'Storm stream the tuples are emitted on.',
    },
    dataFormat: {
      type: 'string',
      enum: [...DATA_FORMATS],
      default: 'utf8',
      description:
        'How `data` is put in the tuple: UTF-8 text, base64, or parsed JSON (a record that is not JSON is emitted as text and logged).',
    },
    deaggregate: {
      type: 'boolean',
      default: true,
      description:
        'Split KPL-aggregated records into their user records, one tuple each (message id `<shardId>:<sequenceNumber>:<subSequence>`). `false`: every Kinesis record is one tuple, aggregates as their raw bytes.',
    },
    zookeeper: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        connect: {
          type: 'string',
          minLength: 1,
          description:
            "ZooKeeper connect string, `host:port[,host:port...][/chroot]`. Default: Storm's own ZooKeeper, from the topology conf's `storm.zookeeper.servers` and `storm.zookeeper.port` (2181).",
        },
        sessionTimeoutMs: positiveMs(
          'ZooKeeper session timeout; a lease is trusted only this long after the last server reply.',
          10_000,
          1_000,
        ),
        root: {
          type: 'string',
          pattern: '^/[^\\s]*$',
          default: '/kinesis-spout',
          description: 'Root znode; state lives under `<root>/<applicationName>/<streamName>/`.',
        },
        auth: {
          type: 'object',
          additionalProperties: false,
          required: ['scheme', 'payload'],
          properties: {
            scheme: {
              type: 'string',
              enum: ['digest'],
              description: 'ZooKeeper authentication scheme; only `digest` (the client has no SASL/Kerberos).',
            },
            payload: {
              type: 'string',
              pattern: '^[^:\\s]+:\\S+$',
              description:
                "`user:password` for `digest`. With it, every node below `<root>` is created readable and writable only by these credentials. Never logged. Default: the topology conf's `storm.zookeeper.topology.auth.scheme`/`payload` when set by hand (see [ZooKeeper security](zookeeper.md#security)).",
            },
          },
        },
      },
    },
    delivery: {
      type: 'string',
      enum: ['at-least-once', 'at-most-once', 'none'],
      default: 'at-least-once',
      description:
        'What a crash may cost, as storm-kafka-client names it (see [Delivery modes](guarantees.md#delivery-modes)). `at-least-once`: the checkpoint passes only acked records, failed tuples are re-emitted; a crash repeats what was in flight, never loses. `at-most-once`: the checkpoint is written past each fetched batch before any of it is emitted; a crash loses what was fetched and not yet emitted (and what the topology had not finished), never repeats; fails are not replayed. `none`: records are emitted as read and the checkpoint follows the last emitted one every `checkpointIntervalMs`; a crash repeats up to one interval of records; fails are not replayed.',
    },
    tupleTracking: {
      type: 'boolean',
      default: false,
      description:
        "With `delivery` `at-most-once` or `none`: emit with message ids anyway, so that `topology.max.spout.pending` and Storm's complete latency work; acks and fails then only release flow control, nothing is replayed. Without it tuples carry no id and Storm acks them at once. (`at-least-once` always tracks.)",
    },
    ordering: {
      type: 'string',
      enum: ['parents-acked', 'parents-emitted', 'none'],
      default: 'parents-acked',
      description:
        'When a child shard may be read: once every parent is read and acked (`SHARD_END`: per-key order kept), once every parent record was emitted (lower latency, order kept only for first emits), or at once (`none`: no order across a reshard).',
    },
    maxEmitPerNext: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000,
      default: 100,
      description: 'Most tuples emitted in reply to one `next`.',
    },
    maxRecordsPerRequest: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000,
      default: 1_000,
      description: '`Limit` of each `GetRecords` call.',
    },
    maxGetRecordsPerSecond: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 5,
      default: 5,
      description:
        '`GetRecords` calls per second per shard this application makes at most. Kinesis allows 5 per shard, shared by every application reading the stream: give each of N applications polling one stream `5/N` (2 + 2 with a Firehose beside them…) so that they never throttle each other. After a `ProvisionedThroughputExceededException` a reader halves its rate (down to one call per 2 s), holds it 2 s and climbs back to this in 10 s.',
    },
    idlePollIntervalMs: positiveMs(
      "Pause between `GetRecords` calls on a shard that is caught up: its last answer reached the tip (`MillisBehindLatest` 0) with fewer records than asked for, or none (a shard with a backlog is read back to back, at most 5 calls/s). A record put to a caught-up shard waits up to this long (give or take 20 %, and up to 50 ms more: the waits of a process's caught-up shards end on shared 50 ms ticks, one wake-up for all those due) to be read: lower it for latency, at the CPU of a call (0.15-0.3 ms) each time.",
      1_000,
      200,
    ),
    tricklePollIntervalMs: positiveMs(
      'Pause between `GetRecords` calls on a caught-up shard that received records within the last `trickleHoldMs`: records are trickling in, and the next call comes this soon (give or take 20 %) instead of after `idlePollIntervalMs`. A shard that receives nothing still costs one call per idle interval; one that receives a record a second or more has it emitted within about this long, at up to `maxGetRecordsPerSecond` calls a second while they come. Set it to `idlePollIntervalMs` to poll every caught-up shard at the idle pace. See [the trade, measured](configuration.md#caught-up-shards-latency-against-cpu).',
      200,
      200,
    ),
    trickleHoldMs: {
      type: 'integer',
      minimum: 0,
      maximum: 86_400_000,
      default: 1_000,
      description:
        'How long after an answer that brought records a caught-up shard keeps `tricklePollIntervalMs`, its answers empty or not; then it waits `idlePollIntervalMs` again. `0`: back to the idle interval at the first empty answer (cheaper for a slow trickle, but a record that follows an empty answer waits up to the idle interval).',
    },
    shardBufferSize: {
      type: 'integer',
      minimum: 1,
      default: 2_000,
      description:
        'Records fetched ahead per shard before its reader pauses. It reads again once a whole `maxRecordsPerRequest` fits, or half the buffer if that is less, not a few records at a time (a call costs the CPU of hundreds of records).',
    },
    maxRecordsInMemory: {
      type: 'integer',
      minimum: 1,
      default: 20_000,
      description:
        'Cap on the records a process holds: prefetched, in flight (emitted, not acked), and acked behind an unacked one (the checkpoint cannot pass them yet). Reading pauses at it; a shard holds at most its share (the cap divided by the shards held, at most half of it), so one stuck behind a record that keeps failing does not stop the others.',
    },
    maxBytesInMemory: {
      type: 'integer',
      minimum: 1_048_576,
      default: 268_435_456,
      description:
        "Cap on the bytes (data and partition keys) of the records a process holds, prefetched or in flight (an acked record keeps only its sequence number). Reading pauses at it, shared between shards as `maxRecordsInMemory` is; a `GetRecords` asks for what fits at the shard's mean record size (its first, for one record), so it goes past the cap only by what records larger than that mean add. A KPL user record is counted, and held, by its own bytes: it is copied out of its aggregate.",
    },
    checkpointIntervalMs: positiveMs(
      'How often changed checkpoints are written to ZooKeeper (also on deactivate and exit).',
      2_000,
      10,
    ),
    maxCheckpointWritesPerSecond: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      default: DEFAULT_MAX_CHECKPOINT_WRITES_PER_SECOND,
      description:
        'The application\'s budget of periodic checkpoint writes to ZooKeeper per second, for each stream it reads, whatever the task count: each task takes budget ÷ the members reading the stream (at least 1/s) and, past it, writes the checkpoints stored longest ago first. Nothing is lost: a deferred checkpoint is only older, at most about max(`checkpointIntervalMs`, changed checkpoints ÷ share) (more re-emitted after a crash). Never deferred: the last checkpoint of a shard handed over, `SHARD_END`, deactivate and exit, and every write with `delivery: "at-most-once"`. The default changes nothing up to 2,000 busy shards at the default interval and bounds what 4,096 to 20,000 cost an ensemble (see [why](zookeeper.md#checkpoint-writes-at-thousands-of-shards)); deferred writes are counted (`checkpointWritesDeferred`) and logged once a minute.',
    },
    rebalanceIntervalMs: positiveMs(
      'How often a task re-checks shard ownership even without a ZooKeeper watch firing.',
      2_000,
      100,
    ),
    shardSyncIntervalMs: positiveMs(
      'How often `ListShards` looks for shards no reader saw appear (jittered; past the highest known shard id, a full listing every 5th time).',
      30_000,
      1_000,
    ),
    balance: {
      type: 'string',
      enum: ['count', 'throughput'],
      default: 'count',
      description:
        "How shards are shared among tasks: by count (within one of each other), or by throughput: each task within ±10 % of the mean bytes/s as whole shards allow, every task holding one shard at least, leases moved a few at a time, once the plans have wanted it for 11 s (a publication period), and only through the planned hand-over. With `throughput` every holder publishes its shard's smoothed load in the lease node (see [Balance by throughput](operations.md#balance-by-throughput)).",
    },
    handoffTimeoutMs: positiveMs(
      'How long a task giving a shard away waits for its in-flight acks before checkpointing and releasing.',
      5_000,
      0,
    ),
    directStdio: {
      type: 'boolean',
      default: true,
      description:
        "While Storm keeps sending commands, answer them with blocking reads and writes of the pipes instead of a trip through Node's event loop per command (the loop still runs every 5 ms, and within 20 ms when Storm goes quiet). The reads start with the first tuple emitted, acked or failed: their watchdog thread costs about 10 MiB of resident memory, which a process whose shards are idle does not pay. `false`: event loop only.",
    },
    statsIntervalMs: positiveMs(
      'How often cumulative counters (tuples, Kinesis calls, checkpoint writes, shards held, records and bytes in memory, resident memory) are logged.',
      60_000,
      100,
    ),
    maxRecordAgeMs: {
      type: 'integer',
      minimum: 1_000,
      maximum: MAX_RETENTION_MS,
      description:
        'Off unless set (as Lambda\'s `MaximumRecordAgeInSeconds`): a record older than this, by its `ApproximateArrivalTimestamp` against this host\'s clock, when the spout is about to emit it (for the first time, or again after a fail) is not emitted. With `retry.onExhausted: "deadLetter"` it goes to the dead-letter stream (`reason` `"tooOld"`), else it is skipped; either way it is counted (`tooOld`), logged once a minute per shard, and passed by the checkpoint as if acked. With it set, every dead letter carries two more fields, `reason` and `ageMs`. Whole milliseconds from 1000 (1 s: a caught-up shard is polled about once a second, so a smaller limit would skip records for the poll\'s delay alone) to 365 days (Kinesis\'s longest retention). See [Guarantees](guarantees.md#record-age-limit).',
    },
    retry: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        maxRetries: {
          type: 'integer',
          minimum: -1,
          default: DEFAULT_MAX_RETRIES,
          description:
            'Times a failed tuple is re-emitted; `-1` is unlimited. One more failure and the record is given up as `onExhausted` says. The default spends 23 to 46 minutes in back-off at the default delays (see [Retries and dead letters](topology.md#retries-and-dead-letters)).',
        },
        onExhausted: {
          type: 'string',
          enum: [...ON_EXHAUSTED],
          default: 'skip',
          description:
            'What happens to a record failed more than `maxRetries` times: `skip` (reported with `error`, then passed by the checkpoint) or `deadLetter` (also emitted once, unanchored, on `deadLetterStream`, which the topology must declare with the output fields plus `attempts` and `lastFailureTime`, and `reason` and `ageMs` with `maxRecordAgeMs`).',
        },
        deadLetterStream: {
          type: 'string',
          minLength: 1,
          default: 'deadLetter',
          description:
            'Storm stream of the records given up, and of those too old (`maxRecordAgeMs`), with `onExhausted: "deadLetter"`.',
        },
        initialBackoffMs: positiveMs('Delay before the first re-emit of a failed tuple; doubles each time.', 100, 0),
        maxBackoffMs: positiveMs('Cap on the re-emit delay.', 30_000, 0),
        warnAfterMs: positiveMs(
          'A record retried this long is logged (and again each time this passes): it holds back its shard.',
          60_000,
          1,
        ),
      },
    },
  },
} as const;
