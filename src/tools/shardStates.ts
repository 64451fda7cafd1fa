/**
 * Pure: what each shard is doing, from a snapshot. The same rules as the spout's assignment (finished =
 * SHARD_END or closed before a LATEST first start; parents first by `ordering`), so what `status` says
 * waits is what the spout keeps waiting.
 */
import type { Ordering } from '../config/config';
import type { MemberRecord } from '../coordination/store';
import { UNREADABLE_LEASE } from '../coordination/store';
import type { Position } from '../core/position';
import { parentDone, readableShards } from '../assignment/readable';
import type { ApplicationSnapshot } from './snapshot';

export const ShardState = {
  /** Listed, open, readable (read or about to be). */
  Open: 'open',
  /** Listed, closed (resharded), not read to its end yet. */
  Closed: 'closed',
  /** SHARD_END: read to its end and every record acked (or closed before a LATEST first start). */
  Finished: 'finished',
  /** In ZooKeeper but no longer listed: expired past the stream's retention. */
  Expired: 'expired',
  /** Listed, not read yet: a parent is not finished. */
  Waiting: 'waiting on parents',
} as const;
export type ShardState = (typeof ShardState)[keyof typeof ShardState];

export interface ShardOwner {
  memberId: string;
  taskIndex?: number;
  host?: string;
  pid?: number;
  /** False when the lease's owner is not a live member (its process is gone; ZooKeeper drops the lease when its session ends). */
  live: boolean;
}

export interface ShardStatus {
  shardId: string;
  state: ShardState;
  parents: string[];
  /** Parents not done yet (state `waiting on parents`). */
  waitingOn: string[];
  owner?: ShardOwner;
  /** The stored checkpoint; undefined when the shard has none yet. */
  checkpoint?: { position: Position; updatedAt?: string; writer?: string };
  /** Where a shard with no checkpoint yet will start (the bootstrap decides). */
  startsAt?: Position;
  /** Something in ZooKeeper that cannot be read for this shard. */
  problem?: string;
}

export function isFinishedIn(
  snapshot: Pick<ApplicationSnapshot, 'finished' | 'checkpoints' | 'startOf'>,
  shardId: string,
): boolean {
  return (
    snapshot.finished.has(shardId) ||
    snapshot.checkpoints.get(shardId)?.position.kind === 'SHARD_END' ||
    snapshot.startOf(shardId).kind === 'SHARD_END'
  );
}

function ownerOf(memberId: string | undefined, members: readonly MemberRecord[]): ShardOwner | undefined {
  if (memberId === undefined) return undefined;
  const member = members.find((m) => m.memberId === memberId);
  if (member) return { memberId, taskIndex: member.taskIndex, host: member.host, pid: member.pid, live: true };
  return { memberId, live: false };
}

export function shardStatuses(snapshot: ApplicationSnapshot, ordering: Ordering): ShardStatus[] {
  const listed = new Map(snapshot.listing.map((s) => [s.shardId, s]));
  const isFinished = (id: string) => isFinishedIn(snapshot, id);
  const isParentDone = parentDone(ordering, isFinished, snapshot.ended);
  const readable = new Set(readableShards(snapshot.listing, isFinished, isParentDone));
  const known = new Set([
    ...listed.keys(),
    ...snapshot.checkpoints.keys(),
    ...snapshot.unreadable.keys(),
    ...snapshot.finished,
    ...snapshot.ended,
    ...snapshot.leases.keys(),
  ]);
  return [...known].sort().map((shardId): ShardStatus => {
    const node = listed.get(shardId);
    const stored = snapshot.checkpoints.get(shardId);
    const lease = snapshot.leases.get(shardId);
    let state: ShardState;
    if (!node) state = ShardState.Expired;
    else if (isFinished(shardId)) state = ShardState.Finished;
    else if (!readable.has(shardId)) state = ShardState.Waiting;
    else state = node.closed ? ShardState.Closed : ShardState.Open;
    const parents = node?.parents ?? [];
    const problems = [
      snapshot.unreadable.get(shardId),
      lease === UNREADABLE_LEASE
        ? `lease node of ${shardId} cannot be read: nobody reads the shard until it is removed`
        : undefined,
    ].filter((p): p is string => p !== undefined);
    return {
      shardId,
      state,
      parents,
      waitingOn: state === ShardState.Waiting ? parents.filter((p) => listed.has(p) && !isParentDone(p)) : [],
      owner: lease === UNREADABLE_LEASE ? undefined : ownerOf(lease, snapshot.members),
      checkpoint: stored && { position: stored.position, updatedAt: stored.updatedAt, writer: stored.writer },
      startsAt: stored || snapshot.unreadable.has(shardId) || !node ? undefined : snapshot.startOf(shardId),
      problem: problems.length > 0 ? problems.join('; ') : undefined,
    };
  });
}
