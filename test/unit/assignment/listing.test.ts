import { FULL_LISTING_EVERY } from '../../../src/core/timings';
import { STALE_RECHECK_FIRST_MS, ShardListing, unexplainedShards } from '../../../src/assignment/listing';
import { shard, TestStream } from '../fakes/roundFakes';

function setup(recheckMaxMs = 30_000) {
  const stream = new TestStream(shard('s-0'), shard('s-1'));
  let now = 0;
  const listing = new ShardListing(stream, () => now, recheckMaxMs);
  const advance = (ms: number) => {
    now += ms;
  };
  return { stream, listing, advance };
}

const none = new Set<string>();
const noLeases = new Map<string, string>();

describe('ShardListing', () => {
  it('needs a listing before the first one, and after relist()', async () => {
    const { listing, stream } = setup();
    expect(listing.needsListing).toBe(true);
    expect(listing.cached(none, noLeases)).toBeUndefined();
    listing.update(await listing.list(), none, noLeases);
    expect(listing.cached(none, noLeases)).toEqual([shard('s-0'), shard('s-1')]);
    listing.relist();
    expect(listing.cached(none, noLeases)).toBeUndefined();
    expect(listing.identityCheckDue).toBe(false);
    expect(stream.fullListings).toBe(1);
  });

  it('keeps an identity check asked for until it was done, whatever relists in between', () => {
    const { listing } = setup();
    listing.accept([shard('s-0')]);
    listing.relist(true);
    listing.relist();
    expect(listing.identityCheckDue).toBe(true);
    listing.identityChecked();
    expect(listing.identityCheckDue).toBe(false);
    expect(listing.needsListing).toBe(true);
  });

  it('lists at once for new evidence, then backs off for evidence a listing did not explain', async () => {
    const { listing, advance } = setup(8_000);
    listing.update(await listing.list(), none, noLeases);
    const leftOver = new Map([['s-gone', 'someone']]);
    // First sight: the listing may predate a reshard.
    expect(listing.cached(none, leftOver)).toBeUndefined();
    listing.update(await listing.list(), none, leftOver);
    const waits: number[] = [];
    let since = 0;
    for (let t = 0; t < 40_000; t += 500) {
      advance(500);
      since += 500;
      if (listing.cached(none, leftOver) === undefined) {
        waits.push(since);
        since = 0;
        listing.update(await listing.list(), none, leftOver);
      }
    }
    expect(waits.slice(0, 5)).toEqual([STALE_RECHECK_FIRST_MS, 2_000, 4_000, 8_000, 8_000]);
    // Another unexplained shard is new evidence: looked at promptly, and the back-off starts over.
    const more = new Map([...leftOver, ['s-new', 'other']]);
    expect(listing.cached(none, more)).toBeUndefined();
    listing.update(await listing.list(), none, more);
    advance(STALE_RECHECK_FIRST_MS);
    expect(listing.cached(none, more)).toBeUndefined();
  });

  it('explains the evidence with a fresh listing that shows the new shard', async () => {
    const { listing, stream } = setup();
    listing.update(await listing.list(), none, noLeases);
    const leases = new Map([['s-2', 'other']]);
    stream.setShards(shard('s-0'), shard('s-1'), shard('s-2'));
    expect(listing.cached(none, leases)).toBeUndefined();
    listing.update(await listing.list(), none, leases);
    expect(listing.cached(none, leases)?.map((s) => s.shardId)).toEqual(['s-0', 's-1', 's-2']);
  });

  it('looks past the highest known shard, and lists in full every FULL_LISTING_EVERY-th look', async () => {
    const { listing, stream } = setup();
    listing.accept([shard('shardId-1'), shard('shardId-3')]);
    const relisted: boolean[] = [];
    for (let i = 1; i < FULL_LISTING_EVERY; i += 1) relisted.push(await listing.lookForNewShards());
    expect(relisted).toEqual(Array(FULL_LISTING_EVERY - 1).fill(false));
    expect(stream.looksPast).toEqual(Array(FULL_LISTING_EVERY - 1).fill('shardId-3'));
    expect(await listing.lookForNewShards()).toBe(true);
    expect(listing.identityCheckDue).toBe(true);
  });

  it('relists when the look past the highest id finds a shard', async () => {
    const { listing, stream } = setup();
    listing.accept([shard('shardId-1')]);
    stream.setShards(shard('shardId-1'), shard('shardId-2'));
    expect(await listing.lookForNewShards()).toBe(true);
    expect(listing.needsListing).toBe(true);
    expect(listing.identityCheckDue).toBe(false);
  });

  it('keeps the last hash ranges while a new listing is due', () => {
    const { listing } = setup();
    listing.accept([{ ...shard('s-0'), hashKeyRange: { start: '0', end: '99' } }]);
    listing.relist();
    expect(listing.hashRangeOf('s-0')).toEqual({ start: 0n, end: 99n });
    expect(listing.hashRangeOf('s-1')).toBeUndefined();
  });
});

describe('unexplainedShards', () => {
  it('names a finished shard without a listed child and a lease on an unlisted shard', () => {
    const shards = [shard('s-0', [], true), shard('s-1', [], true), shard('s-2', ['s-1'])];
    const leases = new Map([
      ['s-2', 'a'],
      ['s-9', 'b'],
    ]);
    expect(unexplainedShards(shards, new Set(['s-0', 's-1']), leases)).toEqual(new Set(['s-0', 's-9']));
    expect(unexplainedShards(shards, new Set(['s-1']), new Map([['s-2', 'a']]))).toEqual(new Set());
  });
});
