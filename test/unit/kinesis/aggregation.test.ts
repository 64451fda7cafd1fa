import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { deaggregate, hashKeyOf, type Deaggregated } from '../../../src/kinesis/aggregation';
import { KPL_MAGIC, kplAggregate, kplWithTags } from '../../helpers/kpl';

/** Re-frames protobuf bytes with the magic and a correct MD5, so a test reaches the protobuf reader. */
const framed = (body: Uint8Array) => Buffer.concat([KPL_MAGIC, body, createHash('md5').update(body).digest()]);
const bodyOf = (aggregate: Buffer) => aggregate.subarray(4, aggregate.length - 16);

const userRecords = (result: Deaggregated) => {
  if (result.kind !== 'aggregate') throw new Error(`expected an aggregate, got ${JSON.stringify(result)}`);
  return result.records.map((r) => ({
    partitionKey: r.partitionKey,
    explicitHashKey: r.explicitHashKey,
    data: Buffer.from(r.data).toString('hex'),
    tags: r.tags,
  }));
};

/**
 * Keys as the encoder can take them. It builds its key tables with a plain object and `Object.keys`, which
 * lists array-index keys ("0".."4294967294") first in numeric order: two such keys added out of order get
 * each other's index (found by the property below). So none are generated here; our decoder has no such table.
 */
const isArrayIndex = (k: string) => /^(0|[1-9]\d{0,9})$/.test(k) && Number(k) < 2 ** 32 - 1;
const partitionKey = fc
  .string({ minLength: 1, maxLength: 40, unit: 'grapheme' })
  .filter((k) => k !== '__proto__' && !isArrayIndex(k));
const userRecord = fc.record({
  partitionKey,
  data: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
  explicitHashKey: fc.option(fc.bigInt({ min: 2n ** 32n, max: 2n ** 128n - 1n }).map(String), { nil: undefined }),
});

describe('KPL de-aggregation (vectors from aws-kinesis-agg)', () => {
  it("gives each user record its own bytes, not a view that keeps the aggregate alive (the memory caps count the user record's bytes)", () => {
    const users = Array.from({ length: 10 }, (_, i) => ({ partitionKey: `k${i}`, data: Buffer.alloc(1000, 65 + i) }));
    const built = kplAggregate(users).data;
    // As the SDK hands it over (a Uint8Array) and as a Buffer (whose `slice` is a view, not a copy).
    for (const data of [new Uint8Array(built), Buffer.from(built)]) {
      const result = deaggregate(data);
      if (result.kind !== 'aggregate') throw new Error(result.kind);
      for (const [i, user] of result.records.entries()) {
        expect(user.data.buffer).not.toBe(data.buffer);
        expect(user.data.buffer.byteLength).toBe(user.data.byteLength);
        expect(Buffer.from(user.data)).toEqual(users[i].data);
      }
      data.fill(0);
      expect(Buffer.from(result.records[9].data)).toEqual(users[9].data);
    }
  });

  it('decodes user records in order, with their partition keys, explicit hash keys and data', () => {
    const aggregate = kplAggregate([
      { partitionKey: 'alpha', data: 'one' },
      { partitionKey: 'beta', data: 'two', explicitHashKey: '170141183460469231731687303715884105728' },
      { partitionKey: 'alpha', data: Buffer.alloc(0) },
      { partitionKey: 'ключ', data: 'три' },
    ]);
    expect(aggregate.data.subarray(0, 4)).toEqual(KPL_MAGIC);
    expect(userRecords(deaggregate(aggregate.data))).toEqual([
      { partitionKey: 'alpha', explicitHashKey: undefined, data: Buffer.from('one').toString('hex'), tags: [] },
      {
        partitionKey: 'beta',
        explicitHashKey: '170141183460469231731687303715884105728',
        data: Buffer.from('two').toString('hex'),
        tags: [],
      },
      { partitionKey: 'alpha', explicitHashKey: undefined, data: '', tags: [] },
      { partitionKey: 'ключ', explicitHashKey: undefined, data: Buffer.from('три').toString('hex'), tags: [] },
    ]);
  });

  it('reads tags and skips fields it does not know', () => {
    const withTags = kplWithTags(
      ['pk'],
      ['42'],
      [
        {
          partition_key_index: 0,
          explicit_hash_key_index: 0,
          data: Buffer.from('x'),
          tags: [{ key: 'k', value: 'v' }, { key: 'only' }],
        },
      ],
    );
    expect(userRecords(deaggregate(withTags))).toEqual([
      { partitionKey: 'pk', explicitHashKey: '42', data: '78', tags: [{ key: 'k', value: 'v' }, { key: 'only' }] },
    ]);
    // Field 15 (varint) and field 9 (bytes) appended: a newer producer's additions are ignored.
    const extended = framed(
      Buffer.concat([bodyOf(withTags), Buffer.from([15 << 3, 0x96, 0x01, (9 << 3) | 2, 2, 0xaa, 0xbb])]),
    );
    expect(userRecords(deaggregate(extended))).toHaveLength(1);
  });

  it('a record without the magic is plain; a bad MD5 or protobuf is corrupt, with the reason', () => {
    expect(deaggregate(Buffer.from('{"a":1}'))).toEqual({ kind: 'plain' });
    expect(deaggregate(Buffer.alloc(0))).toEqual({ kind: 'plain' });
    const good = kplAggregate([{ partitionKey: 'a', data: 'b' }]).data;
    const badMd5 = Buffer.from(good);
    badMd5[badMd5.length - 1] ^= 1;
    expect(deaggregate(badMd5)).toMatchObject({ kind: 'corrupt', reason: expect.stringContaining('MD5') });
    expect(deaggregate(KPL_MAGIC)).toMatchObject({ kind: 'corrupt' });
    // Index 3 into a table of one key.
    const badIndex = kplWithTags(['pk'], [], [{ partition_key_index: 3, data: Buffer.from('x'), tags: [] }]);
    expect(deaggregate(badIndex)).toMatchObject({
      kind: 'corrupt',
      reason: expect.stringContaining('partition_key_index 3'),
    });
    expect(deaggregate(framed(Buffer.from([(3 << 3) | 2, 50, 1])))).toMatchObject({
      kind: 'corrupt',
      reason: expect.stringContaining('past the end'),
    });
    expect(deaggregate(framed(Buffer.alloc(0)))).toMatchObject({
      kind: 'corrupt',
      reason: expect.stringContaining('no user record'),
    });
    // A record without data (required).
    expect(deaggregate(framed(Buffer.from([(1 << 3) | 2, 1, 0x61, (3 << 3) | 2, 2, 1 << 3, 0])))).toMatchObject({
      kind: 'corrupt',
      reason: expect.stringContaining('no data'),
    });
  });

  it('property: whatever aws-kinesis-agg encodes decodes to the same user records', () => {
    fc.assert(
      fc.property(fc.array(userRecord, { minLength: 1, maxLength: 30 }), (records) => {
        const decoded = userRecords(deaggregate(kplAggregate(records).data));
        expect(decoded).toEqual(
          records.map((r) => ({
            partitionKey: r.partitionKey,
            explicitHashKey: r.explicitHashKey,
            data: r.data.toString('hex'),
            tags: [],
          })),
        );
      }),
    );
  });

  it('property: corrupt bytes never throw (flipped, truncated, or random protobuf under a correct MD5)', () => {
    const damage = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({
        kind: fc.constant('reframe' as const),
        at: fc.nat(),
        bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
      }),
      fc.record({ kind: fc.constant('random' as const), bytes: fc.uint8Array({ maxLength: 200 }) }),
    );
    fc.assert(
      fc.property(fc.array(userRecord, { minLength: 1, maxLength: 5 }), damage, (records, d) => {
        const good = kplAggregate(records).data;
        let bad: Buffer;
        if (d.kind === 'flip') {
          bad = Buffer.from(good);
          bad[d.at % bad.length] ^= 1 << d.bit;
        } else if (d.kind === 'truncate') bad = good.subarray(0, d.at % good.length);
        else if (d.kind === 'reframe') {
          // Bytes overwritten inside the protobuf, MD5 recomputed: only the protobuf reader can object.
          const body = Buffer.from(bodyOf(good));
          body.set(d.bytes.subarray(0, Math.max(0, body.length - (d.at % body.length))), d.at % body.length);
          bad = framed(body);
        } else bad = framed(d.bytes);
        const result = deaggregate(bad);
        expect(['plain', 'aggregate', 'corrupt']).toContain(result.kind);
      }),
      { numRuns: 500 },
    );
  });
});

describe('hashKeyOf', () => {
  it('is the explicit hash key, else the MD5 of the partition key as a 128-bit big-endian integer', () => {
    expect(hashKeyOf('anything', '12345')).toBe(12345n);
    // MD5("a") = 0cc175b9c0f1b6a831c399e269772661
    expect(hashKeyOf('a')).toBe(0x0cc175b9c0f1b6a831c399e269772661n);
    expect(hashKeyOf('a', 'not a number')).toBeUndefined();
  });
});
