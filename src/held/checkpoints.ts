/**
 * A held shard's checkpoint writes in ZooKeeper: moved forward only (compare-and-set, re-read after a
 * conflict), SHARD_END only with every record acked, and a SHARD_END found at start believed only when a
 * fresh listing agrees.
 */
import type { CoordinationStore } from '../coordination/store';
import { isAhead, isNotBehind, type Position } from '../core/position';
import { ErrorCode, SpoutError } from '../errors';
import type { ShardNode } from '../core/shard';

/** What a checkpoint write needs of a shard. */
export interface CheckpointedShard {
  readonly shardId: string;
  /** Last checkpoint known to be stored, and its node version. */
  readonly stored: { position: Position; version: number } | undefined;
  checkpointStored(stored: { position: Position; version: number }): void;
  /** Where the checkpoint may move now (everything up to it acked). */
  committable(): Position | undefined;
}

/** Where to move the checkpoint from `stored`: `committable` when it is strictly ahead, else nowhere. */
export function checkpointToWrite(
  stored: Position | undefined,
  committable: Position | undefined,
): Position | undefined {
  return committable && stored && isAhead(committable, stored) ? committable : undefined;
}

/** Writes the shard's checkpoint when it moved; true when something was written. Never moves it backwards. */
export async function advanceCheckpoint(
  store: Pick<CoordinationStore, 'writeCheckpoint' | 'readCheckpoint'>,
  shard: CheckpointedShard,
): Promise<boolean> {
  const stored = shard.stored;
  const next = checkpointToWrite(stored?.position, shard.committable());
  if (!next || !stored) return false;
  let result = await store.writeCheckpoint(shard.shardId, next, stored.version);
  if (result === 'conflict') {
    // After a lost connection the outcome of the last write is unknown: re-read, never move backwards.
    const current = await store.readCheckpoint(shard.shardId);
    if (!current) throw new SpoutError(ErrorCode.ZooKeeper, `checkpoint node of ${shard.shardId} disappeared`);
    result = isNotBehind(current.position, next)
      ? current
      : await store.writeCheckpoint(shard.shardId, next, current.version);
    if (result === 'conflict')
      throw new SpoutError(ErrorCode.ZooKeeper, `checkpoint of ${shard.shardId} keeps changing under us`, {
        retriable: true,
      });
  }
  shard.checkpointStored(result);
  return true;
}

/**
 * A SHARD_END checkpoint whose finished marker is missing (hand-edited state, a partial restore, an interrupted
 * reset) is believed only when a fresh unfiltered listing shows the shard closed, or no more (expired): SHARD_END
 * is written only with every record acked, so the marker is made again and its children may be read. On a
 * shard the listing shows open it is corrupt state (believing it would lose the shard's records): thrown.
 * Returns what to tell the operator when the marker was made again.
 */
export async function confirmShardEnd(
  store: Pick<CoordinationStore, 'hasFinishedMarker' | 'restoreFinishedMarker' | 'checkpointPath'>,
  shardId: string,
  freshListing: () => Promise<ShardNode[]>,
  streamLabel: string,
): Promise<string | undefined> {
  if (await store.hasFinishedMarker(shardId)) return undefined;
  const listed = (await freshListing()).find((s) => s.shardId === shardId);
  if (listed && !listed.closed)
    throw new SpoutError(
      ErrorCode.CorruptState,
      `ZooKeeper node ${store.checkpointPath(shardId)} says SHARD_END, but ${shardId} is open in a fresh listing of ${streamLabel} (believing it would lose its records): set it to the position read up to, or remove it to read the shard from its start position`,
    );
  const path = await store.restoreFinishedMarker(shardId);
  return `${shardId}: checkpoint ${store.checkpointPath(shardId)} is SHARD_END but its marker ${path} was missing (a hand edit, a partial restore or an interrupted reset?); the shard is ${listed ? 'closed' : 'no longer in the stream'}, so the marker was made again and its children may be read`;
}
