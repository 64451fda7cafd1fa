import { KinesisClient } from '@aws-sdk/client-kinesis';
import fc from 'fast-check';
import { deaggregate } from '../../../src/kinesis/aggregation';
import { decodeBase64, parseGetRecords } from '../../../src/kinesis/fastGetRecords';
import { type Answer, bothWays } from '../../helpers/getRecordsReplay';
import { kplAggregate } from '../../helpers/kpl';

const ok = (body: unknown): Answer[] => [{ status: 200, body: typeof body === 'string' ? body : JSON.stringify(body) }];

const ARRIVAL = 1_764_680_839.456;
const record = (over: Record<string, unknown> = {}) => ({
  ApproximateArrivalTimestamp: ARRIVAL,
  Data: Buffer.from('hello').toString('base64'),
  EncryptionType: 'KMS',
  PartitionKey: 'pk',
  SequenceNumber: '49656587345271925863817654356201746584000000000000000001',
  ...over,
});

describe('the fast path reads what the SDK reads', () => {
  test('a Kinesis answer: records, iterator, lag; read by the fast path', async () => {
    const { fast, seen } = await bothWays(
      ok({ MillisBehindLatest: 1200, NextShardIterator: 'AAAA+/next==', Records: [record(), record({ Data: '' })] }),
    );
    expect(seen).toMatchObject({ fast: 1, sdk: 0 });
    const output = (fast as { output: { Records: { Data: Uint8Array; ApproximateArrivalTimestamp: Date }[] } }).output;
    expect(Buffer.from(output.Records[0].Data).toString()).toBe('hello');
    expect(output.Records[0].ApproximateArrivalTimestamp.getTime()).toBe(1_764_680_839_456);
    expect(output.Records[1].Data).toEqual(new Uint8Array());
  });

  test('null members, as kinesis-local sends them: left out, as the SDK leaves them out', async () => {
    const { seen, fast } = await bothWays(
      ok({
        ChildShards: null,
        MillisBehindLatest: null,
        NextShardIterator: 'it',
        Records: [record({ EncryptionType: null, ApproximateArrivalTimestamp: null })],
      }),
    );
    expect(seen.fast).toBe(1);
    expect(Object.keys((fast as { output: object }).output).sort()).toEqual([
      '$metadata',
      'NextShardIterator',
      'Records',
    ]);
  });

  test('an empty batch at the tip, and one without EncryptionType', async () => {
    expect((await bothWays(ok({ MillisBehindLatest: 0, NextShardIterator: 'it', Records: [] }))).seen.fast).toBe(1);
    expect(
      (await bothWays(ok({ NextShardIterator: 'it', Records: [record({ EncryptionType: undefined })] }))).seen.fast,
    ).toBe(1);
  });

  test("the shard's end: no iterator, the children", async () => {
    const { seen, fast } = await bothWays(
      ok({
        ChildShards: [
          {
            HashKeyRange: { EndingHashKey: '170141183460469231731687303715884105727', StartingHashKey: '0' },
            ParentShards: ['shardId-000000000000'],
            ShardId: 'shardId-000000000001',
          },
          {
            HashKeyRange: {
              EndingHashKey: '340282366920938463463374607431768211455',
              StartingHashKey: '170141183460469231731687303715884105728',
            },
            ParentShards: ['shardId-000000000000'],
            ShardId: 'shardId-000000000002',
          },
        ],
        MillisBehindLatest: 0,
        Records: [record()],
      }),
    );
    expect(seen.fast).toBe(1);
    expect((fast as { output: { ChildShards: unknown[] } }).output.ChildShards).toHaveLength(2);
  });

  test('unicode partition keys and data, members the SDK does not know', async () => {
    const key = 'clé-日本-🙂-\u0000-"\\';
    const { fast, seen } = await bothWays(
      ok({
        NextShardIterator: 'it',
        Records: [record({ PartitionKey: key, Data: Buffer.from('données 🙂').toString('base64'), Later: { x: 1 } })],
        SomethingNew: [1, 2],
      }),
    );
    expect(seen.fast).toBe(1);
    const out = (fast as { output: { Records: { PartitionKey: string; Data: Uint8Array }[] } }).output.Records[0];
    expect(out.PartitionKey).toBe(key);
    expect(Buffer.from(out.Data).toString()).toBe('données 🙂');
    expect(out).not.toHaveProperty('Later');
  });

  test('a KPL aggregate arrives as its bytes and deaggregates the same', async () => {
    const built = kplAggregate([
      { partitionKey: 'a', data: 'one' },
      { partitionKey: 'ü', data: 'two' },
    ]);
    const { fast, seen } = await bothWays(
      ok({ NextShardIterator: 'it', Records: [record({ Data: Buffer.from(built.data).toString('base64') })] }),
    );
    expect(seen.fast).toBe(1);
    const data = (fast as { output: { Records: { Data: Uint8Array }[] } }).output.Records[0].Data;
    expect(deaggregate(data)).toMatchObject({
      kind: 'aggregate',
      records: [{ partitionKey: 'a' }, { partitionKey: 'ü' }],
    });
  });

  test.each([
    ['not JSON', 'not json'],
    ['an empty body', ''],
    ['an array', '[]'],
    ['a null partition key', JSON.stringify({ Records: [record({ PartitionKey: null })] })],
    ['no data', JSON.stringify({ Records: [record({ Data: undefined })] })],
    ['a null record', JSON.stringify({ Records: [null, record()] })],
    ['a number for a string', JSON.stringify({ Records: [record({ SequenceNumber: 1 })] })],
    ['a string timestamp', JSON.stringify({ Records: [record({ ApproximateArrivalTimestamp: '1764680839.5' })] })],
    ['a string lag', JSON.stringify({ Records: [], MillisBehindLatest: '5' })],
    ['base64 without padding', JSON.stringify({ Records: [record({ Data: 'aGk' })] })],
    ['base64 with the URL alphabet', JSON.stringify({ Records: [record({ Data: 'a-_k' })] })],
    ['base64 with a character that is none', JSON.stringify({ Records: [record({ Data: 'aG*k' })] })],
    ['padding inside', JSON.stringify({ Records: [record({ Data: 'QQ==QQ==' })] })],
    ['a child without its range', JSON.stringify({ ChildShards: [{ ShardId: 's', ParentShards: ['p'] }] })],
  ])('%s: left to the SDK, which gives its own answer or error', async (_, body) => {
    const { seen } = await bothWays([{ status: 200, body }]);
    expect(seen).toMatchObject({ fast: 0, sdk: 1 });
  });
});

describe('error answers are the SDK’s own', () => {
  const error = (status: number, type: string, message = `${type} happened`): Answer => ({
    status,
    body: JSON.stringify({ __type: type, message }),
    headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazonaws.kinesis/` },
  });
  test.each([
    [400, 'ProvisionedThroughputExceededException', true],
    [400, 'ExpiredIteratorException', false],
    [400, 'ResourceNotFoundException', false],
    [400, 'KMSAccessDeniedException', false],
    [400, 'KMSThrottlingException', true],
    [400, 'KMSDisabledException', false],
    [400, 'AccessDeniedException', false],
    [400, 'UnrecognizedClientException', false],
    [500, 'InternalFailure', true],
  ])('%d %s', async (status, type) => {
    const { fast, seen } = await bothWays([error(status, type)]);
    expect((fast as { error: { name: string } }).error.name).toBe(type);
    expect(seen).toMatchObject({ fast: 0, sdk: 0 });
  });

  test('a 200 whose body is cut off: the SDK meets the failure and reports it as without the fast path', async () => {
    const reset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const body = JSON.stringify({ NextShardIterator: 'it', Records: [record()] }).slice(0, 40);
    const { fast, seen } = await bothWays([{ status: 200, body, cutOff: reset }]);
    expect(fast).toHaveProperty('error.message', expect.stringContaining('socket hang up'));
    expect(seen.requests).toBeGreaterThanOrEqual(1);
    expect(seen).toMatchObject({ fast: 0, sdk: 0 });
  }, 20_000);

  test('a 503 without a JSON body, then a good answer after the retry', async () => {
    const answers = [
      { status: 503, body: '<html>Service Unavailable</html>', headers: { 'content-type': 'text/html' } },
      ok({ NextShardIterator: 'it', Records: [record()] })[0],
    ];
    const { fast, seen } = await bothWays(answers);
    expect(seen).toMatchObject({ requests: 2, fast: 1 });
    expect(fast).toHaveProperty('output.$metadata.attempts', 2);
  }, 20_000);
});

const SEQUENCE = fc.stringMatching(/^[0-9]{1,56}$/);
const kinesisRecord = fc.record(
  {
    ApproximateArrivalTimestamp: fc.integer({ min: 1_300_000_000_000, max: 2_000_000_000_000 }).map((ms) => ms / 1000),
    Data: fc.uint8Array({ maxLength: 1200 }).map((b) => Buffer.from(b).toString('base64')),
    EncryptionType: fc.constantFrom('KMS', 'NONE'),
    PartitionKey: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 256 }),
    SequenceNumber: SEQUENCE,
  },
  { requiredKeys: ['Data', 'PartitionKey', 'SequenceNumber'] },
);
const childShard = fc.record({
  HashKeyRange: fc.record({ EndingHashKey: SEQUENCE, StartingHashKey: SEQUENCE }),
  ParentShards: fc.array(fc.string({ minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 2 }),
  ShardId: fc.string({ minLength: 1, maxLength: 30 }),
});
const getRecordsAnswer = fc.record(
  {
    ChildShards: fc.array(childShard, { maxLength: 2 }),
    MillisBehindLatest: fc.nat({ max: 86_400_000 }),
    NextShardIterator: fc.base64String({ minLength: 4, maxLength: 400 }),
    Records: fc.array(kinesisRecord, { maxLength: 30 }),
  },
  { requiredKeys: ['Records'] },
);

/** One change to a good answer of the kind the SDK may read differently or refuse: null, a wrong type, a bad character. */
const damage = fc.record({
  path: fc.constantFrom('Data', 'PartitionKey', 'SequenceNumber', 'ApproximateArrivalTimestamp', 'EncryptionType'),
  value: fc.oneof(
    fc.constant(null),
    fc.integer(),
    fc.boolean(),
    fc.constant([]),
    fc.constant({}),
    fc.string({ maxLength: 12 }),
    fc.base64String({ maxLength: 12 }).map((s) => `${s}=`),
  ),
});

/** Characters around base64's alphabet: its own, the URL alphabet's, padding, spaces, non-ASCII letters Node decodes. */
const base64ish = fc.constantFrom(
  ...'AZaz09+/=-_ *\n\t.'.split(''),
  'Q',
  'g',
  '\u00c1',
  '\u0141',
  '\u0100',
  '\u{1F600}',
  '\u0000',
);
const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';
/** A UTF-16 unit whose low byte is a base64 character: Node's decoder reads it as that character, the SDK refuses it. */
const lowByteAlias = fc
  .tuple(fc.integer({ min: 1, max: 0xff }), fc.constantFrom(...BASE64_ALPHABET.split('')))
  .map(([high, c]) => String.fromCharCode((high << 8) | c.charCodeAt(0)));
/** Well-formed base64 with one character replaced, inserted or removed (any character, non-ASCII included). */
const mutatedBase64 = fc
  .tuple(
    fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.from(b).toString('base64')),
    fc.nat(),
    fc.constantFrom('replace', 'insert', 'remove'),
    fc.oneof(base64ish, lowByteAlias, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
  )
  .map(([s, at, how, c]) => {
    const i = s.length === 0 ? 0 : at % s.length;
    if (how === 'remove') return s.slice(0, i) + s.slice(i + 1);
    return s.slice(0, i) + c + s.slice(how === 'replace' ? i + 1 : i);
  });

describe('random answers', () => {
  test('well-formed answers: the fast path reads them, the same as the SDK', async () => {
    await fc.assert(
      fc.asyncProperty(getRecordsAnswer, async (answer) => {
        const { seen } = await bothWays(ok(answer));
        expect(seen).toMatchObject({ fast: 1, sdk: 0 });
      }),
      { numRuns: 150 },
    );
  });

  test('damaged answers: the same outcome as the SDK, output or error', async () => {
    await fc.assert(
      fc.asyncProperty(getRecordsAnswer, fc.nat(), damage, async (answer, at, { path, value }) => {
        const records = answer.Records as Record<string, unknown>[];
        if (records.length > 0) records[at % records.length][path] = value;
        await bothWays(ok(answer));
      }),
      { numRuns: 200 },
    );
  });

  test('decodeBase64 takes exactly what the SDK takes, and gives the same bytes', () => {
    // The decoder the client itself uses for Blob members (@smithy's fromBase64), not a copy of its rule.
    const decoder = new KinesisClient({ region: 'us-east-1' }).config.base64Decoder;
    const sdkBase64 = (s: string) => {
      try {
        return decoder(s);
      } catch {
        return undefined;
      }
    };
    fc.assert(
      fc.property(
        fc.oneof(fc.base64String({ maxLength: 40 }), fc.string({ unit: base64ish, maxLength: 16 }), mutatedBase64),
        (s) => {
          expect(decodeBase64(s)).toEqual(sdkBase64(s));
        },
      ),
      { numRuns: 5000 },
    );
  });

  test('a non-ASCII character in base64 (decoded by Node as some letter) is refused, as the SDK refuses it', () => {
    for (const s of ['AAA\u0141', '\u00c1AAA', 'AA\u0100=', 'QUJD\u{1F600}A==', 'AAAA\u0000AAA'])
      expect(decodeBase64(s)).toBeUndefined();
  });

  test("records whose data is mutated base64: the SDK's output or its error, never another answer", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutatedBase64, { minLength: 1, maxLength: 3 }), async (datas) => {
        const { seen } = await bothWays(
          ok({ NextShardIterator: 'it', Records: datas.map((Data) => record({ Data })) }),
        );
        // Taken only when every Data is base64 the SDK reads.
        expect(seen.fast + seen.sdk).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  test('parseGetRecords is what the fast path gives, without $metadata', () => {
    const body = Buffer.from(JSON.stringify({ NextShardIterator: 'it', Records: [record()] }));
    expect(parseGetRecords(body)).toEqual({
      NextShardIterator: 'it',
      Records: [
        {
          ApproximateArrivalTimestamp: new Date(1_764_680_839_456),
          Data: new Uint8Array(Buffer.from('hello')),
          EncryptionType: 'KMS',
          PartitionKey: 'pk',
          SequenceNumber: record().SequenceNumber,
        },
      ],
    });
  });
});
