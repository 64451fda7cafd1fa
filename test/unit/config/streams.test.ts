/** `streams`: several Kinesis streams in one spout component, checked with errors that name the key. */
import { streamConfigs, validateConfig } from '../../../src/config/config';
import { checkOutputFields } from '../../../src/config/stormChecks';

const base = { region: 'us-east-1', applicationName: 'app', zookeeper: { connect: '127.0.0.1:2181' } };
const ARN = 'arn:aws:kinesis:eu-west-1:123456789012:stream/clicks';
const CONSUMER = `${ARN}/consumer/app:1700000000`;

const fails = (raw: Record<string, unknown>) => {
  try {
    validateConfig(raw);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('accepted');
};

describe('streams', () => {
  it('each entry gets the top-level keys as defaults and its own where it sets them; caps split evenly', () => {
    const config = validateConfig({
      ...base,
      initialPosition: 'TRIM_HORIZON',
      outputStream: 'records',
      maxRecordsInMemory: 30_001,
      maxBytesInMemory: 3 * 1_048_576,
      idlePollIntervalMs: 500,
      streams: [
        { streamName: 'orders' },
        { streamArn: ARN, region: 'eu-west-1', initialPosition: 'LATEST', outputStream: 'clicks' },
      ],
    });
    const [orders, clicks] = streamConfigs(config);
    expect(orders).toMatchObject({
      streamName: 'orders',
      region: 'us-east-1',
      initialPosition: 'TRIM_HORIZON',
      outputStream: 'records',
      idlePollIntervalMs: 500,
      maxRecordsInMemory: 15_000,
      maxBytesInMemory: 1_572_864,
    });
    expect(orders.streamArn).toBeUndefined();
    expect(clicks).toMatchObject({
      streamArn: ARN,
      region: 'eu-west-1',
      initialPosition: 'LATEST',
      outputStream: 'clicks',
    });
    expect(clicks.streamName).toBeUndefined();
    for (const own of [orders, clicks]) expect(own.streams).toBeUndefined();
  });

  it('one stream: the configuration itself, unchanged', () => {
    const config = validateConfig({ ...base, streamName: 'orders' });
    expect(streamConfigs(config)).toEqual([config]);
  });

  it.each([
    [
      { ...base, streamName: 'a', streams: [{ streamName: 'b' }] },
      'kinesis.spout.streams = [{"streamName":"b"}]: give exactly one of streamName, streamArn or streams (a list of streams), not streamName and streams',
    ],
    [{ ...base, streams: [] }, 'kinesis.spout.streams = []: must NOT have fewer than 1 items'],
    [
      { ...base, streams: [{ streamName: 'a' }, { region: 'eu-west-1' }] },
      'kinesis.spout.streams[1].streamName = (missing): exactly one of streamName or streamArn is required in each entry of streams',
    ],
    [
      { ...base, streams: [{ streamName: 'a', streamArn: ARN }] },
      'kinesis.spout.streams[0].streamName = "a": exactly one of streamName or streamArn is required in each entry of streams',
    ],
    [
      { ...base, streams: [{ streamName: 'a', outputFields: ['data'] }] },
      'kinesis.spout.streams[0].outputFields = ["data"]: unknown key; outputFields is a key of kinesis.spout itself (for every stream), not of this entry; allowed keys: streamName, streamArn, region, initialPosition, outputStream, consumerArn',
    ],
    [
      // The key, with its path, not the value; and the key it was meant to be.
      { ...base, streams: [{ streamName: 'a' }, { streamName: 'b', outputFeilds: ['data'] }] },
      'kinesis.spout.streams[1].outputFeilds = ["data"]: unknown key; did you mean outputFields? outputFields is a key of kinesis.spout itself',
    ],
    [
      // A misspelt streamName is a typo, not a missing streamName.
      { ...base, streams: [{ streamName: 'a' }, { streamNme: 'b' }] },
      'kinesis.spout.streams[1].streamNme = "b": unknown key; did you mean streamName? allowed keys: streamName, streamArn',
    ],
    [
      { ...base, streams: [{ streamName: 'a', regoin: 'eu-west-1' }] },
      'kinesis.spout.streams[0].regoin = "eu-west-1": unknown key; did you mean region?',
    ],
    [
      { ...base, streams: [{ streamName: 'a', banana: 1 }] },
      'kinesis.spout.streams[0].banana = 1: unknown key; allowed keys: streamName',
    ],
    [
      { ...base, streams: [{ streamName: 'a' }, { streamName: 'b', initialPosition: 'EARLIEST' }] },
      'kinesis.spout.streams[1].initialPosition = "EARLIEST": allowed: "LATEST", "TRIM_HORIZON" or {"atTimestamp": "<ISO-8601>"}',
    ],
    [
      { ...base, streams: [{ streamName: 'a', initialPosition: { atTimestamp: 'yesterday' } }] },
      'kinesis.spout.streams[0].initialPosition.atTimestamp = "yesterday": must be an ISO-8601 date-time',
    ],
    [
      { ...base, streams: [{ streamName: 'a', region: 'us east' }] },
      'kinesis.spout.streams[0].region = "us east": must be an AWS region name',
    ],
    [
      { ...base, streams: [{ streamName: 'clicks' }, { streamArn: ARN }] },
      'kinesis.spout.streams[1].streamArn = "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks": names stream clicks as streams[0] does',
    ],
    [
      { ...base, streams: [{ streamName: 'a', outputStream: '' }] },
      'kinesis.spout.streams[0].outputStream = "": must NOT have fewer than 1 characters',
    ],
    [
      { ...base, streams: [{ streamArn: ARN, consumerArn: CONSUMER }] },
      'kinesis.spout.streams[0].consumerArn = "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks/consumer/app:1700000000": applies only with readMode "fanOut"',
    ],
    [
      { ...base, readMode: 'fanOut', streams: [{ streamName: 'orders', consumerArn: CONSUMER }] },
      'kinesis.spout.streams[0].consumerArn = "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks/consumer/app:1700000000": must be a consumer of stream orders',
    ],
    [
      { ...base, readMode: 'fanOut', consumerArn: CONSUMER, streams: [{ streamArn: ARN }] },
      'kinesis.spout.consumerArn = "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks/consumer/app:1700000000": a consumer belongs to one stream: with streams, give consumerArn in the entry of its stream',
    ],
    [
      {
        ...base,
        retry: { onExhausted: 'deadLetter', deadLetterStream: 'poison' },
        streams: [{ streamName: 'a' }, { streamName: 'b', outputStream: 'poison' }],
      },
      'kinesis.spout.retry.deadLetterStream = "poison": must differ from the outputStream of streams[1] (b)',
    ],
  ])('refuses %j naming the key', (raw, message) => {
    expect(fails(raw as Record<string, unknown>)).toContain(message);
  });

  it('a fan-out entry given by its consumer ARN uses it; the others the consumer name', () => {
    const config = validateConfig({
      ...base,
      readMode: 'fanOut',
      streams: [{ streamName: 'orders' }, { streamArn: ARN, consumerArn: CONSUMER }],
    });
    const [orders, clicks] = streamConfigs(config);
    expect(orders).toMatchObject({ consumerName: 'app' });
    expect(orders.consumerArn).toBeUndefined();
    expect(clicks).toMatchObject({ consumerArn: CONSUMER });
    expect(clicks.consumerName).toBeUndefined();
  });

  it('every output stream must be declared with the output fields, named by the key that chose it', () => {
    const config = validateConfig({
      ...base,
      outputFields: ['data', 'streamName'],
      streams: [{ streamName: 'a' }, { streamName: 'b', outputStream: 'bs' }, { streamName: 'c' }],
    });
    const context = (fields: Record<string, string[]>) => ({ 'stream->outputfields': fields });
    expect(() =>
      checkOutputFields(config, context({ default: ['data', 'streamName'], bs: ['data', 'streamName'] })),
    ).not.toThrow();
    expect(() => checkOutputFields(config, context({ default: ['data', 'streamName'] }))).toThrow(
      'bad configuration: kinesis.spout.streams[1].outputStream = "bs": the topology declares no such stream for this spout (declared: default)',
    );
    expect(() => checkOutputFields(config, context({ default: ['data'], bs: ['data', 'streamName'] }))).toThrow(
      /kinesis.spout.outputFields = \["data","streamName"\]: must equal the fields the topology declares for stream "default"/,
    );
  });
});
