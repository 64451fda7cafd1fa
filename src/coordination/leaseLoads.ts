/**
 * Shard loads kept in the lease nodes (balance "throughput"): the holder writes its shard's smoothed load
 * into its own lease node, every task reads them all to plan (balance.ts). Beside store.ts, in the same
 * layout (layout.ts) and values (storedValues.ts).
 */
import type { ShardLoad } from '../core/load';
import { nodePath } from './layout';
import { leaseLoadOf, leaseValue } from './storedValues';
import type { NodeData, ZooKeeper } from './zooKeeper';

export interface LoadStore {
  readonly base: string;
  readonly memberId: string;
}

/**
 * Writes the shard's load into its lease node at the version last written here. Resolves the node's version
 * now while the lease is still this session's (`written`: whether the load got in), undefined when it is
 * not (gone, or another's): never writes into another task's lease.
 */
export async function publishLoad(
  zk: Pick<ZooKeeper, 'setData' | 'getData' | 'sessionId'>,
  store: LoadStore,
  shardId: string,
  load: ShardLoad,
  version: number,
): Promise<{ version: number; written: boolean } | undefined> {
  const path = nodePath(store.base, 'leases', shardId);
  const written = await zk.setData(path, leaseValue(store.memberId, load), version);
  if (written !== 'conflict') return { version: written, written: true };
  const node = await zk.getData(path);
  return node && node.ephemeralOwner === zk.sessionId ? { version: node.version, written: false } : undefined;
}

/** The load each lease node holds, by shard id; a node without a valid one is left out (unknown). */
export function loadsOf(nodes: ReadonlyMap<string, NodeData>): Map<string, ShardLoad> {
  const loads = new Map<string, ShardLoad>();
  for (const [shardId, node] of nodes) {
    const load = leaseLoadOf(node.data);
    if (load) loads.set(shardId, load);
  }
  return loads;
}
