/**
 * How a task decides which leases to take and which to give: one interface, two policies (by count,
 * `byCount.ts`; by throughput, `byThroughput.ts`), chosen once from `config.balance`. The round
 * (`round.ts`) asks the policy for this task's part of the plan; everything else about a round (what may be
 * read, what was lost, stray leases) is the same under every policy.
 */
import type { SpoutConfig } from '../config/config';
import type { CoordinationStore } from '../coordination/store';
import { ByCount } from './byCount';
import { ByThroughput } from './byThroughput';

/** What a policy plans from. */
export interface PolicyInput {
  /** Shards that may be read now (parents first). */
  readable: readonly string[];
  /** Lease holder by shard (any task, live or not). */
  leases: ReadonlyMap<string, string>;
  /** Members to share among (the start grace's placeholders for tasks not joined yet included). */
  members: readonly string[];
  /**
   * Lease counts of the other members, as the first member published them, when `leases` names only this
   * task's own leases (the others as held elsewhere): balance by count only.
   */
  heldElsewhere?: ReadonlyMap<string, number>;
  me: string;
  /** A shard of this task is being handed over now. */
  releasing: boolean;
  /** Monotonic ms. */
  now: number;
}

export interface LeasePlan {
  /** Free readable shards to try, best first; stop after `want` succeed. */
  candidates: string[];
  want: number;
  /** Shards this member holds beyond its share, to hand over. */
  release: string[];
  /** Why each shard in `release` goes, for the log (default: another task is owed a share). */
  reasons?: ReadonlyMap<string, string>;
}

export interface AssignmentPolicy {
  /**
   * Reads what the policy plans from beyond the lease holders (by throughput: the loads published in the
   * lease nodes, from the watched copy, so no request), arming `watch` for its next change.
   */
  observe(store: Pick<CoordinationStore, 'leaseNodes'>, watch: () => void): Promise<void>;
  /** This task's part of the plan. A policy may remember what it planned (by throughput: since when it wants to give). */
  plan(input: PolicyInput): LeasePlan;
  /** A round that planned nothing (no trusted session, not reading): what was remembered across rounds is forgotten. */
  paused(): void;
}

/** The policy `config.balance` names; `now` is the monotonic clock. */
export function policyFor(config: Pick<SpoutConfig, 'balance' | 'streamIndex'>, now: () => number): AssignmentPolicy {
  switch (config.balance) {
    case 'throughput':
      return new ByThroughput(now);
    case 'count':
      return new ByCount(config.streamIndex ?? 0);
  }
}
