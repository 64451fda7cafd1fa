/**
 * Everything the tools decide from, read once: the application's state in ZooKeeper (through the spout's
 * store) and the stream's shard graph (an unfiltered listing, the only one that may say a shard expired).
 */
import type { CheckpointRecord, MemberRecord } from '../coordination/store';
import { startPositions, type Bootstrap, type Position } from '../core/position';
import type { ShardNode } from '../core/shard';
import { describeError, SpoutError } from '../errors';
import { describeStream, listShards, type StreamIdentity } from '../kinesis/shards';
import type { Application } from './application';

export interface ApplicationSnapshot {
  base: string;
  bootstrap: Bootstrap;
  /** The stream as Kinesis describes it now (its ARN and creation time must match the bootstrap's). */
  identity: StreamIdentity;
  listing: ShardNode[];
  checkpoints: ReadonlyMap<string, CheckpointRecord>;
  /** Shards whose checkpoint node cannot be read, and why. */
  unreadable: ReadonlyMap<string, string>;
  finished: ReadonlySet<string>;
  ended: ReadonlySet<string>;
  /** Lease holder (member id) by shard; UNREADABLE_LEASE (coordination/store) when the node cannot be read. */
  leases: ReadonlyMap<string, string>;
  members: MemberRecord[];
  /** Where a shard without a checkpoint would start (the bootstrap decides). */
  startOf(shardId: string): Position;
  /** Wall-clock time the snapshot was taken. */
  takenAtMs: number;
}

export async function readSnapshot(app: Application, nowMs: () => number = Date.now): Promise<ApplicationSnapshot> {
  const { store } = app;
  const [identity, listing, finished, ended, leases, members, recorded] = await Promise.all([
    describeStream(app.kinesis, app.stream),
    listShards(app.kinesis, app.stream),
    store.finishedShards(),
    store.endedShards(),
    store.leases(),
    store.memberRecords(),
    store.checkpointedShards(),
  ]);
  const checkpoints = new Map<string, CheckpointRecord>();
  const unreadable = new Map<string, string>();
  await Promise.all(
    [...recorded].map(async (shardId) => {
      try {
        const record = await store.checkpointRecord(shardId);
        if (record) checkpoints.set(shardId, record);
      } catch (err) {
        if (!(err instanceof SpoutError)) throw err;
        unreadable.set(shardId, describeError(err));
      }
    }),
  );
  return {
    base: store.base,
    bootstrap: app.bootstrap,
    identity,
    listing,
    checkpoints,
    unreadable,
    finished,
    ended,
    leases,
    members,
    startOf: startPositions(app.bootstrap),
    takenAtMs: nowMs(),
  };
}
