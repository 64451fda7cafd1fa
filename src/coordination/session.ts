/** A joined ZooKeeper session as the layers above use it (stream/joining.ts makes one). */
import type { Bootstrap, Position } from '../core/position';
import type { CoordinationStore } from './store';
import type { ZooKeeper } from './zooKeeper';

/** What one ZooKeeper session knows; all of it is dropped when the session expires. */
export interface Session {
  zk: ZooKeeper;
  store: CoordinationStore;
  bootstrap: Bootstrap;
  /** Where a shard without a checkpoint starts, from the bootstrap record. */
  startOf: (shardId: string) => Position;
  /** Monotonic time the join completed. */
  joinedAt: number;
}
