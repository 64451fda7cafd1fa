import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, validateConfig } from '../../../src/config/config';

const CONSUMER_ARN = 'arn:aws:kinesis:us-east-1:123456789012:stream/orders/consumer/app:1700000000';
const minimal = { region: 'us-east-1', streamName: 'orders', zookeeper: { connect: '127.0.0.1:2181' } };

describe('configuration', () => {
  it('fills documented defaults and takes the application name from the topology', () => {
    const config = loadConfig({ 'topology.name': 'topo', 'kinesis.spout': minimal });
    expect(config.applicationName).toBe('topo');
    expect(config.initialPosition).toBe('LATEST');
    expect(config.zookeeper).toEqual({
      connect: '127.0.0.1:2181',
      sessionTimeoutMs: 10_000,
      root: '/kinesis-spout',
      creatorOnly: false,
    });
    expect(config.origins).toEqual({
      applicationName: 'topology.name',
      zookeeperConnect: 'kinesis.spout.zookeeper.connect',
      zookeeperAuth: 'none',
    });
    expect(config.retry).toMatchObject({ maxRetries: 100, onExhausted: 'skip', deadLetterStream: 'deadLetter' });
    expect(config.outputFields).toEqual(['partitionKey', 'data', 'shardId', 'sequenceNumber', 'arrivalTimestamp']);
    expect({ records: config.maxRecordsInMemory, bytes: config.maxBytesInMemory }).toEqual({
      records: 20_000,
      bytes: 256 * 2 ** 20,
    });
  });

  it('takes a GetRecords budget per shard of up to 5 calls/s (Kinesis allows 5 for all applications), 5 by default', () => {
    const at = (value: unknown) =>
      validateConfig({ ...minimal, applicationName: 'a', maxGetRecordsPerSecond: value }).maxGetRecordsPerSecond;
    expect(validateConfig({ ...minimal, applicationName: 'a' }).maxGetRecordsPerSecond).toBe(5);
    expect(at(2.5)).toBe(2.5);
    expect(() => at(0)).toThrow('bad configuration: kinesis.spout.maxGetRecordsPerSecond = 0: must be > 0');
    expect(() => at(6)).toThrow('bad configuration: kinesis.spout.maxGetRecordsPerSecond = 6: must be <= 5');
  });

  it('takes a budget of checkpoint writes per second for the application, a whole number from 1, 1,000 by default', () => {
    const at = (value: unknown) =>
      validateConfig({ ...minimal, applicationName: 'a', maxCheckpointWritesPerSecond: value })
        .maxCheckpointWritesPerSecond;
    expect(validateConfig({ ...minimal, applicationName: 'a' }).maxCheckpointWritesPerSecond).toBe(1_000);
    expect(at(4)).toBe(4);
    const key = 'bad configuration: kinesis.spout.maxCheckpointWritesPerSecond';
    expect(() => at(0)).toThrow(`${key} = 0: must be >= 1`);
    expect(() => at(2.5)).toThrow(`${key} = 2.5: must be integer`);
    expect(() => at('100/s')).toThrow(`${key} = "100/s": must be integer`);
  });

  it('takes a record-age limit in whole milliseconds from 1 s to 365 days, none by default', () => {
    const at = (value: unknown) =>
      validateConfig({ ...minimal, applicationName: 'a', maxRecordAgeMs: value }).maxRecordAgeMs;
    expect(validateConfig({ ...minimal, applicationName: 'a' }).maxRecordAgeMs).toBeUndefined();
    expect(at(60_000)).toBe(60_000);
    expect(at(365 * 86_400_000)).toBe(365 * 86_400_000);
    const allowed =
      'must be whole milliseconds from 1000 (1 s; below that a caught-up shard polled once a second would skip records for the poll alone) to 31536000000 (365 days, the longest retention); leave it out for no limit';
    for (const bad of [-1, 0, 999, 1500.5, '60s', 365 * 86_400_000 + 1, null])
      expect(() => at(bad)).toThrow(
        `bad configuration: kinesis.spout.maxRecordAgeMs = ${JSON.stringify(bad)}: ${allowed}`,
      );
  });

  it('merges the conf over a JSON file named on the command line', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'conf-')), 'spout.json');
    writeFileSync(
      file,
      JSON.stringify({ ...minimal, applicationName: 'fromfile', zookeeper: { connect: 'a:1', root: '/r' } }),
    );
    const config = loadConfig({ 'kinesis.spout': { zookeeper: { connect: 'b:2' } } }, file);
    expect(config.applicationName).toBe('fromfile');
    expect(config.zookeeper).toMatchObject({ connect: 'b:2', root: '/r' });
  });

  it.each([
    [
      { ...minimal, applicationName: 'a', colour: 'red' },
      'kinesis.spout.colour = "red": unknown key; allowed keys: streamName',
    ],
    [
      { ...minimal, applicationName: 'a', zookeeper: { connect: 'x', sessionTimeoutMs: 5 } },
      'kinesis.spout.zookeeper.sessionTimeoutMs = 5: must be >= 1000',
    ],
    [
      { ...minimal, applicationName: 'a', initialPosition: 'EARLIEST' },
      'kinesis.spout.initialPosition = "EARLIEST": allowed: "LATEST", "TRIM_HORIZON" or {"atTimestamp": "<ISO-8601>"}',
    ],
    [
      { ...minimal, applicationName: 'a', initialPosition: { atTimestamp: 'yesterday' } },
      'kinesis.spout.initialPosition.atTimestamp = "yesterday": must be an ISO-8601 date-time',
    ],
    [
      { ...minimal, applicationName: 'a', maxBytesInMemory: 1_000 },
      'kinesis.spout.maxBytesInMemory = 1000: must be >= 1048576',
    ],
    [
      { ...minimal, applicationName: 'a', dataFormat: 'xml' },
      'kinesis.spout.dataFormat = "xml": allowed: "utf8", "base64", "json"',
    ],
    [
      { region: 'us-east-1', applicationName: 'a', zookeeper: { connect: 'x' } },
      'kinesis.spout.streamName = (missing): exactly one of streamName or streamArn is required',
    ],
    [
      { ...minimal, applicationName: 'a', zookeeper: {} },
      'kinesis.spout.zookeeper.connect = (missing): is required when the topology conf has no storm.zookeeper.servers',
    ],
    [
      { ...minimal, applicationName: 'a', zookeeper: { connect: 'x', auth: { scheme: 'sasl', payload: 'u:p' } } },
      'kinesis.spout.zookeeper.auth.scheme = (hidden): allowed: "digest"',
    ],
    [
      {
        ...minimal,
        applicationName: 'a',
        zookeeper: { connect: 'x', auth: { scheme: 'digest', payload: 'no-colon-secret' } },
      },
      'kinesis.spout.zookeeper.auth.payload = (hidden): must match pattern',
    ],
    [
      { ...minimal },
      'kinesis.spout.applicationName = (missing): is required when the topology conf has no topology.name',
    ],
    [
      { ...minimal, applicationName: 'a', retry: { initialBackoffMs: 500, maxBackoffMs: 100 } },
      'kinesis.spout.retry.maxBackoffMs = 100: must be >= retry.initialBackoffMs (500)',
    ],
    [
      { ...minimal, applicationName: 'a', retry: { onExhausted: 'drop' } },
      'kinesis.spout.retry.onExhausted = "drop": allowed: "skip", "deadLetter"',
    ],
    [
      { ...minimal, applicationName: 'a', retry: { onExhausted: 'deadLetter', deadLetterStream: 'default' } },
      'kinesis.spout.retry.deadLetterStream = "default": must differ from outputStream',
    ],
    [
      { ...minimal, applicationName: 'a', region: 'us east 1' },
      'kinesis.spout.region = "us east 1": must be an AWS region name: words and a number joined by dashes, such as "us-east-1", "eu-central-2" or "us-gov-west-1"',
    ],
    [
      { ...minimal, applicationName: 'a', region: 'us-east1' },
      'kinesis.spout.region = "us-east1": must be an AWS region name: words and a number joined by dashes',
    ],
    [
      { ...minimal, applicationName: 'a', outputFeilds: ['data'] },
      'kinesis.spout.outputFeilds = ["data"]: unknown key; did you mean outputFields? allowed keys: streamName',
    ],
    [
      { ...minimal, applicationName: 'a', zookeeper: { conect: 'x' } },
      'kinesis.spout.zookeeper.conect = "x": unknown key; did you mean connect? allowed keys: connect, sessionTimeoutMs, root, auth',
    ],
    [
      { ...minimal, applicationName: 'a', zookeeper: { connect: 'x', auth: { scheme: 'digest', paylod: 'u:secret' } } },
      'kinesis.spout.zookeeper.auth.paylod = (hidden): unknown key; did you mean payload?',
    ],
    [
      { ...minimal, applicationName: 'a', retry: { maxRetries: -2 } },
      'kinesis.spout.retry.maxRetries = -2: must be >= -1',
    ],
    [
      { ...minimal, applicationName: 'a', readMode: 'push' },
      'kinesis.spout.readMode = "push": allowed: "polling", "fanOut"',
    ],
    [
      { ...minimal, applicationName: 'a', consumerName: 'c' },
      'kinesis.spout.consumerName = "c": applies only with readMode "fanOut"',
    ],
    [
      { ...minimal, applicationName: 'a', readMode: 'fanOut', consumerName: 'c', consumerArn: CONSUMER_ARN },
      'kinesis.spout.consumerName = "c": give consumerName or consumerArn, not both',
    ],
    [
      { ...minimal, streamName: 'other', applicationName: 'a', readMode: 'fanOut', consumerArn: CONSUMER_ARN },
      `kinesis.spout.consumerArn = "${CONSUMER_ARN}": must be a consumer of stream other`,
    ],
    [
      { ...minimal, applicationName: 'a', readMode: 'fanOut', consumerArn: 'arn:aws:kinesis:x' },
      'kinesis.spout.consumerArn = "arn:aws:kinesis:x": must match pattern',
    ],
  ])('rejects %j naming key, value and what is allowed', (raw, message) => {
    expect(() => validateConfig(raw as Record<string, unknown>)).toThrow(`bad configuration: ${message}`);
  });

  it('reads by polling unless told, and fans out through a consumer named after the application by default', () => {
    expect(validateConfig({ ...minimal, applicationName: 'a' })).toMatchObject({ readMode: 'polling' });
    expect(validateConfig({ ...minimal, applicationName: 'a' }).consumerName).toBeUndefined();
    expect(validateConfig({ ...minimal, applicationName: 'a', readMode: 'fanOut' })).toMatchObject({
      readMode: 'fanOut',
      consumerName: 'a',
    });
    const given = validateConfig({ ...minimal, applicationName: 'a', readMode: 'fanOut', consumerArn: CONSUMER_ARN });
    expect(given.consumerArn).toBe(CONSUMER_ARN);
    expect(given.consumerName).toBeUndefined();
  });

  it('delivers at least once unless told; tupleTracking only with the other modes, retry only with at-least-once', () => {
    const base = { ...minimal, applicationName: 'a' };
    expect(validateConfig(base)).toMatchObject({ delivery: 'at-least-once', tupleTracking: false });
    expect(validateConfig({ ...base, delivery: 'at-most-once', tupleTracking: true })).toMatchObject({
      delivery: 'at-most-once',
      tupleTracking: true,
    });
    expect(validateConfig({ ...base, delivery: 'none' })).toMatchObject({ delivery: 'none', tupleTracking: false });
    expect(() => validateConfig({ ...base, delivery: 'exactly-once' })).toThrow(
      'bad configuration: kinesis.spout.delivery = "exactly-once": allowed: "at-least-once", "at-most-once", "none"',
    );
    expect(() => validateConfig({ ...base, tupleTracking: false })).toThrow(
      'bad configuration: kinesis.spout.tupleTracking = false: applies only with delivery "at-most-once" or "none"',
    );
    expect(() => validateConfig({ ...base, delivery: 'none', retry: { maxRetries: 3 } })).toThrow(
      'bad configuration: kinesis.spout.retry = {"maxRetries":3}: applies only with delivery "at-least-once"',
    );
  });

  it('reports an unreadable file by name', () => {
    expect(() => loadConfig({}, '/nonexistent/spout.json')).toThrow(/bad configuration file \/nonexistent\/spout.json/);
  });
});

describe('a region', () => {
  it.each(['us-east-1', 'eu-central-2', 'us-gov-west-1', 'us-isob-east-1', 'eusc-de-east-1', 'xx-future-9'])(
    '%s has the shape of one',
    (region) => {
      expect(validateConfig({ ...minimal, applicationName: 'a', region }).region).toBe(region);
    },
  );

  it.each(['us-east1', 'useast-1', 'US-EAST-1', 'local', 'us-east-1 ', 'us_east_1'])('%s has not', (region) => {
    expect(() => validateConfig({ ...minimal, applicationName: 'a', region })).toThrow(
      `kinesis.spout.region = ${JSON.stringify(region)}: must be an AWS region name`,
    );
  });
});
