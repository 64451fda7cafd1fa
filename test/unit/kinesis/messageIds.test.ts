/** Message ids of several streams: shard ids repeat across streams, the ids must not. */
import fc from 'fast-check';
import { messageId, messageIdOfKey, parseMessageId } from '../../../src/kinesis/records';

describe('message ids across streams', () => {
  it('the first stream keeps the single-stream form; the others carry their index before a slash', () => {
    expect(messageId('shardId-000000000000', '4962')).toBe('shardId-000000000000:4962');
    expect(messageId('shardId-000000000000', '4962', undefined, 0)).toBe('shardId-000000000000:4962');
    expect(messageId('shardId-000000000000', '4962', undefined, 2)).toBe('2/shardId-000000000000:4962');
    expect(messageId('shardId-000000000000', '4962', 3, 1)).toBe('1/shardId-000000000000:4962:3');
    expect(parseMessageId('2/shardId-000000000000:4962:3')).toEqual({
      streamIndex: 2,
      shardId: 'shardId-000000000000',
      sequenceNumber: '4962',
      subSequence: 3,
      key: '4962:3',
    });
    expect(messageIdOfKey('shardId-000000000000', '4962:3', 2)).toBe('2/shardId-000000000000:4962:3');
  });

  it('refuses ids this spout never emits: index 0 spelled out, leading zeros, two prefixes, a slash in the shard', () => {
    for (const bad of ['0/s:1', '01/s:1', '1/2/s:1', '/s:1', 'x/s:1', '12345/s:1', '1/:1', '1/s/t:1'])
      expect(parseMessageId(bad)).toBeUndefined();
  });

  it('property: ids round-trip, and two records that differ in stream, shard or key never share an id', () => {
    const record = fc.record({
      streamIndex: fc.nat(9_999),
      shardId: fc.stringMatching(/^[a-zA-Z0-9_.-]{1,30}$/),
      seq: fc.bigInt({ min: 0n, max: 10n ** 56n }).map(String),
      sub: fc.option(fc.nat(999_999_999), { nil: undefined }),
    });
    fc.assert(
      fc.property(record, record, (a, b) => {
        const idA = messageId(a.shardId, a.seq, a.sub, a.streamIndex);
        const idB = messageId(b.shardId, b.seq, b.sub, b.streamIndex);
        const parsed = parseMessageId(idA);
        expect(parsed).toMatchObject({ streamIndex: a.streamIndex, shardId: a.shardId, sequenceNumber: a.seq });
        expect(parsed?.subSequence).toBe(a.sub);
        const same = a.streamIndex === b.streamIndex && a.shardId === b.shardId && a.seq === b.seq && a.sub === b.sub;
        expect(idA === idB).toBe(same);
      }),
    );
  });
});
