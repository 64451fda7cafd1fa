/**
 * What one assignment round decides, from plain values: which held shards to stop (lease lost) or drain
 * (expired from the stream), which are readable, what to hand over and what to take, and what to do with
 * lease nodes of this session that this process does not hold. Pure; the round carries it out.
 */
import type { ShardNode } from '../core/shard';
import type { Position } from '../core/position';
import { type LeasePlan, planLeases, readableShards } from './byCount';
import type { ShardLoad } from '../core/load';
import { throughputLeasePlan } from './byThroughput';

/** A held shard as the round sees it. */
export interface HeldView {
  shardId: string;
  /** Its phase kind (see ownedShard.ts). */
  phase: string;
}

export type Ordering = 'parents-finished' | 'parents-emitted' | 'none';

export interface RoundInput {
  me: string;
  shards: readonly ShardNode[];
  finished: ReadonlySet<string>;
  /** Shards whose every record was emitted (only with ordering "parents-emitted"). */
  ended: ReadonlySet<string>;
  leases: ReadonlyMap<string, string>;
  /** Members to share among (the start grace's placeholders included). */
  members: readonly string[];
  ordering: Ordering | string;
  held: readonly HeldView[];
  /** Where a shard without a checkpoint starts (SHARD_END: finished before the first start). */
  startOf(shardId: string): Position;
  /** With balance "throughput": the loads the lease nodes hold (without: shares by count). */
  loads?: ReadonlyMap<string, ShardLoad>;
  /** By count: which member takes an extra share among equals (see shareTargets; the stream's index). */
  rotation?: number;
  /** Monotonic ms (balance "throughput": how long this task has been wanted to give). */
  now: number;
  /** With balance "throughput": since when the plan has wanted this task to give leases away (byThroughput.ts). */
  givingSince?: number;
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
  /** With balance "throughput": each member's load (bytes/s) as the plan reckons it. */
  loadOf?: ReadonlyMap<string, number>;
  /** With balance "throughput": why each shard handed over goes. */
  reasons?: ReadonlyMap<string, string>;
  /** With balance "throughput": the next round's `givingSince`. */
  givingSince?: number;
}

/** Phases in which the round leaves a held shard alone: it is starting, or on its way out. */
const SETTLING = new Set(['closing', 'starting', 'givingBack']);
/** Phases from which a shard may be handed over. */
const RELEASABLE = new Set(['reading', 'draining']);

export function planRound(input: RoundInput): RoundPlan {
  const { me, shards, finished, ended, leases, ordering } = input;
  const listed = new Set(shards.map((s) => s.shardId));
  const forget: string[] = [];
  const drain: string[] = [];
  for (const { shardId, phase } of input.held) {
    if (SETTLING.has(phase)) continue;
    if (leases.get(shardId) !== me) forget.push(shardId);
    else if (phase === 'reading' && !listed.has(shardId)) drain.push(shardId);
  }
  const isFinished = (id: string) => finished.has(id) || input.startOf(id).kind === 'SHARD_END';
  const parentDone =
    ordering === 'none'
      ? () => true
      : ordering === 'parents-emitted'
        ? (id: string) => ended.has(id) || isFinished(id)
        : isFinished;
  const readable = readableShards(shards, isFinished, parentDone);
  const plan: LeasePlan & Pick<RoundPlan, 'loadOf' | 'reasons' | 'givingSince'> = input.loads
    ? throughputLeasePlan({
        readable,
        leases,
        members: input.members,
        me,
        loads: input.loads,
        releasing: input.held.some((h) => h.phase === 'releasing'),
        now: input.now,
        givingSince: input.givingSince,
      })
    : planLeases({ readable, leases, members: input.members, me, rotation: input.rotation });
  const gone = new Set(forget);
  const releasable = new Set(
    input.held.filter((h) => RELEASABLE.has(h.phase) && !gone.has(h.shardId)).map((h) => h.shardId),
  );
  return {
    forget,
    drain,
    readable,
    release: plan.release,
    handOver: plan.release.filter((id) => releasable.has(id)),
    candidates: plan.candidates,
    want: plan.want,
    loadOf: plan.loadOf,
    reasons: plan.reasons,
    givingSince: plan.givingSince,
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
