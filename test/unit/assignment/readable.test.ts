/** Which shards may be read now: parents first, by `ordering` (the rule the round and `status` share). */
import { parentDone, readableShards } from '../../../src/assignment/readable';
import type { ShardNode } from '../../../src/core/shard';

const shard = (shardId: string, parents: string[] = [], closed = false): ShardNode => ({ shardId, parents, closed });

describe('readableShards (parents first)', () => {
  const graph = [
    shard('p', [], true),
    shard('q', [], true),
    shard('c1', ['p']),
    shard('c2', ['p']),
    shard('m', ['c2', 'q']),
  ];

  it('does not read a child while any parent is unfinished', () => {
    expect(readableShards(graph, () => false)).toEqual(['p', 'q']);
    expect(readableShards(graph, (id) => id === 'p')).toEqual(['q', 'c1', 'c2']);
    expect(readableShards(graph, (id) => ['p', 'c2'].includes(id))).toEqual(['q', 'c1']);
    expect(readableShards(graph, (id) => ['p', 'c2', 'q'].includes(id))).toEqual(['c1', 'm']);
  });

  it('treats a parent missing from the listing as expired', () => {
    expect(readableShards([shard('c', ['gone'])], () => false)).toEqual(['c']);
  });
});

describe('parentDone (ordering)', () => {
  const graph = [shard('p', [], true), shard('c', ['p'])];
  const finished = (id: string) => id === 'done';

  it('parents-acked: a parent is done once finished; parents-emitted: once every record was emitted; none: at once', () => {
    const ended = new Set(['p']);
    expect(readableShards(graph, finished, parentDone('parents-acked', finished, ended))).toEqual(['p']);
    expect(readableShards(graph, finished, parentDone('parents-emitted', finished, ended))).toEqual(['p', 'c']);
    expect(readableShards(graph, finished, parentDone('parents-emitted', finished, new Set()))).toEqual(['p']);
    expect(readableShards(graph, finished, parentDone('none', finished, new Set()))).toEqual(['p', 'c']);
  });

  it('parents-emitted: a finished parent is done even without its ended marker', () => {
    const isFinished = (id: string) => id === 'p';
    expect(readableShards(graph, isFinished, parentDone('parents-emitted', isFinished, new Set()))).toEqual(['c']);
  });
});
