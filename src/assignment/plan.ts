/**
 * What one assignment round decides, from plain values: which held shards to stop (lease lost) or drain
 * (expired from the stream), which are readable, what to hand over and what to take (this task's part of
 * the policy's plan), and what to do with lease nodes of this session that this process does not hold. Pure
 * but for what the policy remembers of its own plans; the round carries it out.
 */
import type { Ordering } from '../config/config';
import type { PhaseKind } from '../core/phase';
import type { Position } from '../core/position';
import type { ShardNode } from '../core/shard';
import type { AssignmentPolicy } from './policy';
import { parentDone, readableShards } from './readable';

/** A held shard as the round sees it. */
export interface HeldView {
  shardId: string;
  phase: PhaseKind;
}

export interface RoundInput {
  me: string;
  shards: readonly ShardNode[];
  finished: ReadonlySet<string>;
  /** Shards whose every record was emitted (only with ordering "parents-emitted"). */
  ended: ReadonlySet<string>;
  leases: ReadonlyMap<string, string>;
  /** Members to share among (the start grace's placeholders included). */
  members: readonly string[];
  /** The other members' lease counts when `leases` names only this task's own (see PolicyInput). */
  heldElsewhere?: ReadonlyMap<string, number>;
  ordering: Ordering;
  held: readonly HeldView[];
  /** Where a shard without a checkpoint starts (SHARD_END: finished before the first start). */
  startOf(shardId: string): Position;
  policy: AssignmentPolicy;
  /** Monotonic ms. */
  now: number;
}

export interface RoundPlan {
  /** Held shards whose lease is no longer ours: stop emitting at once. */
  forget: string[];
  /** Held shards being read that the (unfiltered) listing no longer shows: expired, finish once acked. */
  drain: string[];
  readable: string[];
  /** Shards this member holds beyond its share (by the lease nodes). */
  release: string[];
  /** Of those, the held ones in a phase that can be handed over. */
  handOver: string[];
  /** Free readable shards to try, best first, until `want` were taken. */
  candidates: string[];
  want: number;
  /** Why each shard handed over goes, when the policy says more than that another task is owed a share. */
  reasons?: ReadonlyMap<string, string>;
}

/**
 * What the round does with a held shard in each phase: leave it alone (starting, or on its way out), hand it
 * over if the plan says so (reading, draining), or only check that its lease is still ours. Every phase is
 * named, so a new one does not build until it is placed here.
 */
const IN_ROUND: Readonly<Record<PhaseKind, 'settling' | 'releasable' | 'held'>> = {
  starting: 'settling',
  closing: 'settling',
  givingBack: 'settling',
  reading: 'releasable',
  draining: 'releasable',
  releasing: 'held',
  gone: 'held',
};

export function planRound(input: RoundInput): RoundPlan {
  const { me, shards, finished, ended, leases } = input;
  const listed = new Set(shards.map((s) => s.shardId));
  const forget: string[] = [];
  const drain: string[] = [];
  for (const { shardId, phase } of input.held) {
    if (IN_ROUND[phase] === 'settling') continue;
    if (leases.get(shardId) !== me) forget.push(shardId);
    else if (phase === 'reading' && !listed.has(shardId)) drain.push(shardId);
  }
  const isFinished = (id: string) => finished.has(id) || input.startOf(id).kind === 'SHARD_END';
  const readable = readableShards(shards, isFinished, parentDone(input.ordering, isFinished, ended));
  const plan = input.policy.plan({
    readable,
    leases,
    members: input.members,
    heldElsewhere: input.heldElsewhere,
    me,
    releasing: input.held.some((h) => h.phase === 'releasing'),
    now: input.now,
  });
  const gone = new Set(forget);
  const releasable = new Set(
    input.held.filter((h) => IN_ROUND[h.phase] === 'releasable' && !gone.has(h.shardId)).map((h) => h.shardId),
  );
  return {
    forget,
    drain,
    readable,
    release: plan.release,
    handOver: plan.release.filter((id) => releasable.has(id)),
    candidates: plan.candidates,
    want: plan.want,
    reasons: plan.reasons,
  };
}

/**
 * Lease nodes of this session that this process does not hold: ours all the same (a create applied with
 * its reply lost, a release that did not get through). Read the ones the plan wants read here; give the
 * others back; never orphan one. In the order of `leases`.
 */
export function strayLeases(input: {
  me: string;
  leases: ReadonlyMap<string, string>;
  isHeld(shardId: string): boolean;
  /** Let go since the leases were read: its lease is gone or going. */
  letGoSince(shardId: string): boolean;
  readable: ReadonlySet<string>;
  release: ReadonlySet<string>;
  /** May this shard be read here now (active, not backing off)? */
  mayRead(shardId: string): boolean;
}): { shardId: string; action: 'read' | 'giveBack' }[] {
  const stray: { shardId: string; action: 'read' | 'giveBack' }[] = [];
  for (const [shardId, owner] of input.leases) {
    if (owner !== input.me || input.isHeld(shardId) || input.letGoSince(shardId)) continue;
    const wanted = input.readable.has(shardId) && !input.release.has(shardId) && input.mayRead(shardId);
    stray.push({ shardId, action: wanted ? 'read' : 'giveBack' });
  }
  return stray;
}
