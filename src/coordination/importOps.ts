/** An import of another consumer's positions as the ops of one ZooKeeper transaction: every shard, or nothing. */
import type { Bootstrap, Position } from '../core/position';
import { nodePath } from './layout';
import { checkpointValue, encode, leaseValue } from './storedValues';
import type { TxOp } from './zooKeeper';

export interface ImportedCheckpoint {
  shardId: string;
  position: Position;
  /** Version of the checkpoint read when planning; undefined when it had none (created). */
  checkpointVersion: number | undefined;
}

/**
 * Nothing is written unless the bootstrap to create is still absent, every checkpoint to create still absent
 * and every one to replace still at the version planned from, and no lease of a written shard is held: each
 * lease is created and removed inside the transaction. `writer` names the checkpoints' writer.
 */
export function importOps(
  base: string,
  bootstrap: Bootstrap | undefined,
  checkpoints: readonly ImportedCheckpoint[],
  writer: string,
): TxOp[] {
  const ops: TxOp[] = [];
  if (bootstrap) ops.push({ op: 'create', path: `${base}/bootstrap`, data: encode(bootstrap) });
  for (const c of checkpoints) {
    const lease = nodePath(base, 'leases', c.shardId);
    const checkpoint = nodePath(base, 'checkpoints', c.shardId);
    const data = checkpointValue(c.position, writer);
    ops.push({ op: 'create', path: lease, data: leaseValue(writer), ephemeral: true });
    ops.push(
      c.checkpointVersion === undefined
        ? { op: 'create', path: checkpoint, data }
        : { op: 'set', path: checkpoint, data, version: c.checkpointVersion },
    );
    ops.push({ op: 'remove', path: lease, version: 0 });
  }
  return ops;
}
