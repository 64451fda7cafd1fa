/** An operator's reset as the ops of one ZooKeeper transaction: all shards, or nothing. */
import type { Position } from '../core/position';
import { nodePath } from './layout';
import { checkpointValue, leaseValue } from './storedValues';
import type { TxOp } from './zooKeeper';

/**
 * One shard's part of an operator's reset: its new checkpoint (created when it has none), and the
 * finished/ended markers removed when it will be read again.
 */
export interface CheckpointReset {
  shardId: string;
  position: Position;
  /** Version of the checkpoint read when planning; undefined when it had none (created). */
  checkpointVersion: number | undefined;
  removeFinished: boolean;
  removeEnded: boolean;
}

/**
 * Nothing is written unless every checkpoint is still at the version it was planned from (or still absent)
 * and every marker to remove is still there. With `whileNoLease`, each shard's lease is created and removed
 * inside the same transaction, so it also fails when any of them is held at that moment. `writer` is named
 * as the checkpoints' writer and the leases' owner.
 */
export function resetOps(
  base: string,
  resets: readonly CheckpointReset[],
  whileNoLease: boolean,
  writer: string,
): TxOp[] {
  const ops: TxOp[] = [];
  for (const reset of resets) {
    const lease = nodePath(base, 'leases', reset.shardId);
    if (whileNoLease) ops.push({ op: 'create', path: lease, data: leaseValue(writer), ephemeral: true });
    const checkpoint = nodePath(base, 'checkpoints', reset.shardId);
    const data = checkpointValue(reset.position, writer);
    ops.push(
      reset.checkpointVersion === undefined
        ? { op: 'create', path: checkpoint, data }
        : { op: 'set', path: checkpoint, data, version: reset.checkpointVersion },
    );
    if (reset.removeFinished) ops.push({ op: 'remove', path: nodePath(base, 'finished', reset.shardId), version: -1 });
    if (reset.removeEnded) ops.push({ op: 'remove', path: nodePath(base, 'ended', reset.shardId), version: -1 });
    if (whileNoLease) ops.push({ op: 'remove', path: lease, version: 0 });
  }
  return ops;
}
