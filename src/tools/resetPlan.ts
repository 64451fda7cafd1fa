/**
 * Pure: what a reset writes. The selected shards (every listed shard by default) and, so that parents stay
 * read before children, every listed descendant of them, in parents-first order:
 *   TRIM_HORIZON      each shard from its start;
 *   <timestamp>       each shard from that time (a closed shard whose records are all older is read to its
 *                     end at once and finished again by the spout: "finished" stays "read to the end");
 *   LATEST            each shard from now; a finished shard stays finished (nothing of it is newer),
 *                     unless a parent of it is reset;
 *   <sequence number> one shard, resuming after that record (what a checkpoint means); its descendants
 *                     from their start, since their records all come after it.
 * A shard that will be read again loses its finished/ended markers in the same transaction, so no child
 * counts it done. Expired shards are not in the stream any more and are never written; shards closed before
 * a LATEST first start are finished for the spout whatever their checkpoint, and are left as they are.
 */
import { compareAfter, describePosition, type Position } from '../core/position';
import type { ResetTarget } from './args';
import { usageError } from './exitCodes';
import { isFinishedIn } from './shardStates';
import type { ApplicationSnapshot } from './snapshot';

export type ResetFacts = Pick<
  ApplicationSnapshot,
  'listing' | 'checkpoints' | 'unreadable' | 'finished' | 'ended' | 'leases' | 'startOf'
>;

export interface ResetChange {
  shardId: string;
  /** The stored checkpoint; undefined when the shard has none yet. */
  from: Position | undefined;
  /** Where a shard with no checkpoint would have started. */
  startsAt: Position | undefined;
  to: Position;
  /** Version the checkpoint was read at (compare-and-set); undefined: the node is created. */
  checkpointVersion: number | undefined;
  removeFinished: boolean;
  removeEnded: boolean;
  /** Why the shard is in the plan. */
  reason: string;
  /** Lease holder now, if any. */
  heldBy: string | undefined;
}

export interface ResetPlan {
  target: ResetTarget;
  /** In parents-first order. */
  changes: ResetChange[];
  /** Shards in scope that are left as they are, and why. */
  unchanged: { shardId: string; why: string }[];
  /** Every lease held in the application now, whether or not its shard is in the plan. */
  leases: { shardId: string; owner: string }[];
}

export function samePosition(a: Position | undefined, b: Position | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.kind !== b.kind) return false;
  // Inside a KPL aggregate (a sub-sequence) is not after the whole record.
  if (a.kind === 'AFTER' && b.kind === 'AFTER') return compareAfter(a, b) === 0;
  if (a.kind === 'AT_TIMESTAMP' && b.kind === 'AT_TIMESTAMP') return a.timestampMs === b.timestampMs;
  return true;
}

/** Listed shards with every listed ancestor before them (ties by shard id). */
export function parentsFirst(listing: ResetFacts['listing']): string[] {
  const byId = new Map(listing.map((s) => [s.shardId, s]));
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (id: string) => {
    if (seen.has(id) || !byId.has(id)) return;
    seen.add(id);
    for (const parent of [...byId.get(id)!.parents].sort()) visit(parent);
    order.push(id);
  };
  for (const id of [...byId.keys()].sort()) visit(id);
  return order;
}

function descendantsOf(listing: ResetFacts['listing'], roots: Iterable<string>): Set<string> {
  const children = new Map<string, string[]>();
  for (const shard of listing)
    for (const parent of shard.parents) children.set(parent, [...(children.get(parent) ?? []), shard.shardId]);
  const found = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop()!) ?? []) {
      if (!found.has(child)) {
        found.add(child);
        stack.push(child);
      }
    }
  }
  return found;
}

function checkSelection(
  facts: ResetFacts,
  target: ResetTarget,
  selection: readonly string[] | undefined,
  nowMs: number,
): void {
  const listed = new Set(facts.listing.map((s) => s.shardId));
  const recorded = new Set([
    ...facts.checkpoints.keys(),
    ...facts.unreadable.keys(),
    ...facts.finished,
    ...facts.ended,
    ...facts.leases.keys(),
  ]);
  for (const shardId of selection ?? []) {
    if (listed.has(shardId)) continue;
    if (recorded.has(shardId))
      throw usageError(
        `--shards: ${shardId} expired from the stream (no longer listed): there is nothing left to read in it; leave it out`,
      );
    throw usageError(
      `--shards: unknown shard ${shardId}; the stream has ${[...listed].sort().join(', ') || 'no shards'}`,
    );
  }
  if (target.kind === 'AFTER' && selection?.length !== 1) {
    throw usageError(
      `--to ${target.sequenceNumber}: a sequence number belongs to one shard: name it with --shards <shardId>`,
    );
  }
  if (target.kind === 'AT_TIMESTAMP' && target.timestampMs > nowMs) {
    throw usageError(
      `--to ${target.text}: that is in the future (now is ${new Date(nowMs).toISOString()}); use LATEST to skip to now`,
    );
  }
}

export function planReset(
  facts: ResetFacts,
  target: ResetTarget,
  selection: readonly string[] | undefined,
  nowMs: number,
): ResetPlan {
  checkSelection(facts, target, selection, nowMs);
  const selected = new Set(selection ?? facts.listing.map((s) => s.shardId));
  const descendants = descendantsOf(facts.listing, selected);
  const parentsOf = new Map(facts.listing.map((s) => [s.shardId, s.parents]));
  const changes: ResetChange[] = [];
  const unchanged: ResetPlan['unchanged'] = [];
  const readAgain = new Set<string>();
  for (const shardId of parentsFirst(facts.listing)) {
    if (!selected.has(shardId) && !descendants.has(shardId)) continue;
    const unreadable = facts.unreadable.get(shardId);
    if (unreadable)
      throw usageError(
        `${shardId}: its checkpoint node cannot be read (${unreadable}); remove or fix it by hand before a reset`,
      );
    const stored = facts.checkpoints.get(shardId);
    const startsAt = stored ? undefined : facts.startOf(shardId);
    if (facts.startOf(shardId).kind === 'SHARD_END') {
      unchanged.push({
        shardId,
        why: "closed before the application's first start with initialPosition LATEST: the spout counts it as finished and never reads it",
      });
      continue;
    }
    const resetParents = (parentsOf.get(shardId) ?? []).filter((p) => readAgain.has(p));
    let to: Position;
    if (target.kind === 'LATEST') {
      if (isFinishedIn(facts, shardId) && resetParents.length === 0) {
        unchanged.push({ shardId, why: 'finished: nothing of it is newer than now' });
        continue;
      }
      to = { kind: 'AT_TIMESTAMP', timestampMs: nowMs };
    } else if (target.kind === 'AFTER') {
      to = selected.has(shardId) ? { kind: 'AFTER', sequenceNumber: target.sequenceNumber } : { kind: 'TRIM_HORIZON' };
    } else {
      to =
        target.kind === 'TRIM_HORIZON'
          ? { kind: 'TRIM_HORIZON' }
          : { kind: 'AT_TIMESTAMP', timestampMs: target.timestampMs };
    }
    readAgain.add(shardId);
    const removeFinished = facts.finished.has(shardId);
    const removeEnded = facts.ended.has(shardId);
    if (samePosition(stored?.position ?? startsAt, to) && !removeFinished && !removeEnded) {
      unchanged.push({
        shardId,
        why: stored ? `already ${describePosition(to)}` : `no checkpoint yet; starts ${describePosition(to)} anyway`,
      });
      continue;
    }
    changes.push({
      shardId,
      from: stored?.position,
      startsAt,
      to,
      checkpointVersion: stored?.version,
      removeFinished,
      removeEnded,
      reason: selected.has(shardId)
        ? selection
          ? 'selected'
          : 'all shards'
        : `descendant of ${[...descendantAncestors(shardId, parentsOf, selected)].sort().join(', ')}: read again after it`,
      heldBy: facts.leases.get(shardId),
    });
  }
  const leases = [...facts.leases]
    .map(([shardId, owner]) => ({ shardId, owner }))
    .sort((a, b) => (a.shardId < b.shardId ? -1 : 1));
  return { target, changes, unchanged, leases };
}

/** The selected ancestors a descendant is in the plan for. */
function descendantAncestors(
  shardId: string,
  parentsOf: ReadonlyMap<string, string[]>,
  selected: ReadonlySet<string>,
): Set<string> {
  const found = new Set<string>();
  const stack = [...(parentsOf.get(shardId) ?? [])];
  const seen = new Set<string>();
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    if (selected.has(id)) found.add(id);
    else stack.push(...(parentsOf.get(id) ?? []));
  }
  return found;
}
