import { validateConfig } from '../../../src/config/config';
import { checkOutputFields, JSON_SMART_CLASSES, kryoWarning } from '../../../src/config/stormChecks';

const config = (extra: Record<string, unknown> = {}) =>
  validateConfig({
    region: 'us-east-1',
    streamName: 's',
    applicationName: 'a',
    zookeeper: { connect: 'z:1' },
    ...extra,
  });
const context = (fields?: Record<string, string[]>) => ({
  taskid: 1,
  componentid: 'k',
  'task->component': { '1': 'k' },
  ...(fields ? { 'stream->outputfields': fields } : {}),
});

describe('checks against the topology', () => {
  it('accepts declared fields equal to outputFields, rejects others naming the key', () => {
    expect(() =>
      checkOutputFields(
        config(),
        context({ default: ['partitionKey', 'data', 'shardId', 'sequenceNumber', 'arrivalTimestamp'] }),
      ),
    ).not.toThrow();
    expect(() => checkOutputFields(config(), context({ default: ['data'] }))).toThrow(
      /kinesis.spout.outputFields = .* must equal the fields the topology declares/,
    );
    expect(() => checkOutputFields(config({ outputStream: 'records' }), context({ default: ['data'] }))).toThrow(
      /kinesis.spout.outputStream = "records": the topology declares no such stream/,
    );
    expect(() => checkOutputFields(config(), context())).not.toThrow();
  });

  it('with dead letters, also requires their stream declared with the output fields, attempts and lastFailureTime', () => {
    const letters = config({
      outputFields: ['data', 'shardId'],
      retry: { onExhausted: 'deadLetter', deadLetterStream: 'poison' },
    });
    const tuples = { default: ['data', 'shardId'] };
    expect(() =>
      checkOutputFields(letters, context({ ...tuples, poison: ['data', 'shardId', 'attempts', 'lastFailureTime'] })),
    ).not.toThrow();
    expect(() => checkOutputFields(letters, context(tuples))).toThrow(
      /kinesis.spout.retry.deadLetterStream = "poison": the topology declares no such stream for this spout \(declared: default\)/,
    );
    expect(() => checkOutputFields(letters, context({ ...tuples, poison: ['data', 'shardId'] }))).toThrow(
      /retry.onExhausted = "deadLetter": dead letters carry .*\["data","shardId","attempts","lastFailureTime"\]: must equal the fields the topology declares for stream "poison": \["data","shardId"\]/,
    );
    // Skipping needs no such stream.
    expect(() => checkOutputFields(config({ outputFields: ['data', 'shardId'] }), context(tuples))).not.toThrow();
  });

  it('with maxRecordAgeMs, dead letters also carry reason and ageMs', () => {
    const letters = config({
      outputFields: ['data'],
      maxRecordAgeMs: 60_000,
      retry: { onExhausted: 'deadLetter', deadLetterStream: 'poison' },
    });
    const poison = ['data', 'attempts', 'lastFailureTime', 'reason', 'ageMs'];
    expect(() => checkOutputFields(letters, context({ default: ['data'], poison }))).not.toThrow();
    expect(() =>
      checkOutputFields(letters, context({ default: ['data'], poison: ['data', 'attempts', 'lastFailureTime'] })),
    ).toThrow(
      'kinesis.spout.retry.onExhausted = "deadLetter" with maxRecordAgeMs: dead letters carry the output fields then attempts, lastFailureTime, reason, ageMs, ["data","attempts","lastFailureTime","reason","ageMs"]: must equal',
    );
    // Skipped, too old records need no stream.
    expect(() =>
      checkOutputFields(config({ outputFields: ['data'], maxRecordAgeMs: 60_000 }), context({ default: ['data'] })),
    ).not.toThrow();
  });

  it('warns when JSON data would meet Kryo without the json-smart classes registered', () => {
    expect(kryoWarning(config(), {})).toBeUndefined();
    expect(kryoWarning(config({ dataFormat: 'json' }), {})).toMatch(
      /topology.kryo.register lists .*JSONObject and .*JSONArray/,
    );
    expect(
      kryoWarning(config({ dataFormat: 'json' }), {
        'topology.kryo.register': Object.fromEntries(JSON_SMART_CLASSES.map((c) => [c, null])),
      }),
    ).toBeUndefined();
    expect(kryoWarning(config({ dataFormat: 'json' }), { 'topology.kryo.register': [JSON_SMART_CLASSES[0]] })).toMatch(
      /lists .*JSONArray \(or/,
    );
    expect(
      kryoWarning(config({ dataFormat: 'json' }), { 'topology.fall.back.on.java.serialization': true }),
    ).toBeUndefined();
  });
});
