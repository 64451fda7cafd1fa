/** Tuples built from records: the configured fields, in order; `subSequence` tells user records of one aggregate apart. */
import { tupleOf, type KinesisRecord } from '../../../src/kinesis/records';

const plain: KinesisRecord = {
  shardId: 'shardId-000000000001',
  sequenceNumber: '49650',
  partitionKey: 'k',
  data: Buffer.from('{"a":1}'),
  arrivalMs: 7,
};
const userRecord: KinesisRecord = {
  ...plain,
  partitionKey: 'u',
  data: Buffer.from('x'),
  subSequence: 3,
  lastSubSequence: 4,
};
const failOnBadJson = () => {
  throw new Error('not expected');
};

describe('tupleOf', () => {
  it('puts the configured fields in the configured order', () => {
    expect(
      tupleOf(plain, ['arrivalTimestamp', 'sequenceNumber', 'shardId', 'data', 'partitionKey'], 'json', failOnBadJson),
    ).toEqual([7, '49650', 'shardId-000000000001', { a: 1 }, 'k']);
  });

  it('gives a user record of an aggregate its index, and a plain record null', () => {
    expect(tupleOf(userRecord, ['sequenceNumber', 'subSequence', 'partitionKey'], 'utf8', failOnBadJson)).toEqual([
      '49650',
      3,
      'u',
    ]);
    expect(tupleOf(plain, ['sequenceNumber', 'subSequence'], 'utf8', failOnBadJson)).toEqual(['49650', null]);
  });

  it('gives base64 data as a string, or as the bytes themselves for a wire that carries bytes (compact)', () => {
    expect(tupleOf(plain, ['data'], 'base64', failOnBadJson)).toEqual([Buffer.from('{"a":1}').toString('base64')]);
    const [bytes] = tupleOf(plain, ['data'], 'base64', failOnBadJson, true);
    expect(Buffer.isBuffer(bytes) && (bytes as Buffer).equals(Buffer.from('{"a":1}'))).toBe(true);
    // Only base64 becomes bytes: text and JSON stay what they are on any wire.
    expect(tupleOf(plain, ['data'], 'utf8', failOnBadJson, true)).toEqual(['{"a":1}']);
  });
});
