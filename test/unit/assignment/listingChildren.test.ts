import { readableShards } from '../../../src/assignment/readable';
import type { ShardNode } from '../../../src/core/shard';
import { ShardListing } from '../../../src/assignment/listing';
import { shard, TestStream } from '../fakes/roundFakes';

function setup(...shards: ShardNode[]) {
  const stream = new TestStream(...shards);
  const listing = new ShardListing(stream, () => 0, 30_000);
  listing.accept(shards);
  return { stream, listing };
}

const child = (shardId: string, parents: string[], start = '0', end = '9'): ShardNode => ({
  ...shard(shardId, parents),
  hashKeyRange: { start, end },
});
const noLeases = new Map<string, string>();
const ids = (shards: readonly ShardNode[] | undefined) => shards?.map((s) => s.shardId);

describe('ShardListing: children from ChildShards', () => {
  it('serves the children of a shard read to its end without a listing, the parent closed, parents first', () => {
    const { listing, stream } = setup(shard('shardId-1'), shard('shardId-2'));
    listing.learnChildren('shardId-1', [
      child('shardId-3', ['shardId-1']),
      child('shardId-4', ['shardId-1'], '10', '19'),
    ]);
    expect(listing.needsListing).toBe(false);
    const shards = listing.cached(new Set(['shardId-1']), noLeases);
    expect(ids(shards)).toEqual(['shardId-1', 'shardId-2', 'shardId-3', 'shardId-4']);
    expect(shards?.[0].closed).toBe(true);
    expect(listing.hashRangeOf('shardId-4')).toEqual({ start: 10n, end: 19n });
    expect(readableShards(shards!, (id) => id === 'shardId-1')).toEqual(['shardId-2', 'shardId-3', 'shardId-4']);
    // Until the parent is finished, its children wait.
    expect(readableShards(shards!, () => false)).toEqual(['shardId-1', 'shardId-2']);
    expect(stream.fullListings).toBe(0);
  });

  it('keeps a merge child waiting for its other parent, which has not ended', () => {
    const { listing } = setup(shard('shardId-1'), shard('shardId-2'));
    listing.learnChildren('shardId-1', [child('shardId-3', ['shardId-1', 'shardId-2'])]);
    const shards = listing.cached(new Set(['shardId-1']), noLeases)!;
    expect(shards.find((s) => s.shardId === 'shardId-2')?.closed).toBe(false);
    expect(readableShards(shards, (id) => id === 'shardId-1')).toEqual(['shardId-2']);
    expect(readableShards(shards, (id) => id !== 'shardId-3')).toEqual(['shardId-3']);
  });

  it('lists again when no children are named (emulators), or a child names a parent it does not know or not its own', () => {
    const { listing } = setup(shard('shardId-1'));
    listing.learnChildren('shardId-1', []);
    expect(listing.needsListing).toBe(true);
    const other = setup(shard('shardId-1'));
    other.listing.learnChildren('shardId-1', [child('shardId-3', ['shardId-1', 'shardId-2'])]);
    expect(other.listing.needsListing).toBe(true);
    expect(ids(other.listing.shards)).toEqual(['shardId-1']);
    // A child without its parents (they would not wait for them) is no ground to read it.
    const orphan = setup(shard('shardId-1'));
    orphan.listing.learnChildren('shardId-1', [child('shardId-3', [])]);
    expect(orphan.listing.needsListing).toBe(true);
  });

  it('keeps a learned child a fresh listing predates, and drops one a listing past the reshard contradicts', () => {
    const { listing } = setup(shard('shardId-1'), shard('shardId-2'));
    listing.learnChildren('shardId-1', [child('shardId-3', ['shardId-1'])]);
    // A listing taken before the reshard: the parent still open there, no child.
    listing.update([shard('shardId-1'), shard('shardId-2')], new Set(), noLeases);
    expect(ids(listing.shards)).toEqual(['shardId-1', 'shardId-2', 'shardId-3']);
    // The parent closed and no such child: the listing is the authority.
    listing.update([shard('shardId-1', [], true), shard('shardId-2')], new Set(), noLeases);
    expect(ids(listing.shards)).toEqual(['shardId-1', 'shardId-2']);
  });

  it('forgets a learned child once a listing shows it (that listing decides from then on)', () => {
    const { listing } = setup(shard('shardId-1'));
    listing.learnChildren('shardId-1', [child('shardId-3', ['shardId-1'])]);
    listing.update([shard('shardId-1', [], true), shard('shardId-3', ['shardId-1'])], new Set(), noLeases);
    listing.update([shard('shardId-1')], new Set(), noLeases);
    expect(ids(listing.shards)).toEqual(['shardId-1']);
  });

  it('confirms learned children with the periodic look past the highest listed id', async () => {
    const { listing, stream } = setup(shard('shardId-1'), shard('shardId-2'));
    listing.learnChildren('shardId-1', [child('shardId-3', ['shardId-1']), child('shardId-4', ['shardId-1'])]);
    stream.setShards(
      shard('shardId-1', [], true),
      shard('shardId-2'),
      shard('shardId-3', ['shardId-1']),
      shard('shardId-4', ['shardId-1']),
    );
    expect(await listing.lookForNewShards()).toBe(false);
    expect(stream.looksPast).toEqual(['shardId-2']);
    expect(await listing.lookForNewShards()).toBe(false);
    expect(stream.looksPast).toEqual(['shardId-2', 'shardId-4']);
    expect(stream.fullListings).toBe(0);
  });

  it('lists in full when the periodic look does not show a learned child', async () => {
    const { listing, stream } = setup(shard('shardId-1'), shard('shardId-2'));
    listing.learnChildren('shardId-1', [child('shardId-3', ['shardId-1'])]);
    expect(await listing.lookForNewShards()).toBe(true);
    expect(listing.needsListing).toBe(true);
    const other = setup(shard('shardId-1'), shard('shardId-2'));
    other.listing.learnChildren('shardId-1', [child('shardId-3', ['shardId-1'])]);
    other.stream.setShards(shard('shardId-1', [], true), shard('shardId-3', ['shardId-1']), shard('shardId-5'));
    // A shard nobody named beside the confirmed child: a listing is due.
    expect(await other.listing.lookForNewShards()).toBe(true);
    expect(stream.fullListings).toBe(0);
  });
});
