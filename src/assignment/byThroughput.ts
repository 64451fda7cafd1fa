/**
 * Balance by throughput (config `balance: "throughput"`): the loads published in the lease nodes (from the
 * watched copy of leases/, so reading them costs no request), and this task's part of the plan
 * (balancePlan.ts) as a lease plan: take the free shards placed on it, hand over what the plan moves away
 * from it, one at a time, once the plans have wanted that for long enough.
 */
import { LOAD_CHECK_MS, PUBLISH_EVERY_MS, type ShardLoad } from '../core/load';
import { loadsOf } from '../coordination/leaseLoads';
import type { CoordinationStore } from '../coordination/store';
import { planBalance } from './balancePlan';
import { NOT_JOINED_PREFIX } from './byCount';
import type { AssignmentPolicy, LeasePlan, PolicyInput } from './policy';

/** The members' loads as the plan reckons them, and why each lease given away goes, for the log. */
export interface BalanceView {
  loadOf: ReadonlyMap<string, number>;
  reasons: ReadonlyMap<string, string>;
}

/** The throughput policy: the loads last observed, and the streak of plans that wanted this task to give. */
export class ByThroughput implements AssignmentPolicy {
  private readonly cache: LeaseLoadCache;
  private loads: ReadonlyMap<string, ShardLoad> = new Map();
  /** Since when the plans have wanted this task to give leases away by load, round after round. */
  private givingSince: number | undefined;

  constructor(now: () => number) {
    this.cache = new LeaseLoadCache(now);
  }

  async observe(store: Pick<CoordinationStore, 'leaseNodes'>, watch: () => void): Promise<void> {
    this.loads = await this.cache.current(store, watch);
  }

  plan(input: PolicyInput): LeasePlan {
    const plan = throughputLeasePlan({ ...input, loads: this.loads, givingSince: this.givingSince });
    this.givingSince = plan.givingSince;
    return plan;
  }

  paused(): void {
    this.givingSince = undefined;
  }
}

/**
 * How long the plans must have wanted this task to give leases away by load, in every round, before it
 * gives one: a load that moved is published again within `PUBLISH_EVERY_MS` (and seen at the next check),
 * so by then every shard whose load changed has told it. Until then a plan may compare a load just
 * published with one published up to 10 s before, and when every load changes at once (the traffic stops,
 * or doubles) that alone makes one task look lighter than another for a few seconds, then the other way round.
 */
export const GIVE_AFTER_MS = PUBLISH_EVERY_MS + LOAD_CHECK_MS;

/**
 * This task's lease plan by throughput. While tasks have not all joined (the start grace's placeholders),
 * free shards are placed but no lease is moved. A lease moved to a task below the count floor goes at once
 * (counts are never stale); one moved by load only once the plans have wanted this task to give by load,
 * round after round, since `givingSince` at least `GIVE_AFTER_MS` (the streak ends at the first round that
 * wants nothing of it; the plan returns where it stands). One at a time: a shard of this task already being
 * handed over (releasing) means no other one is given away yet.
 */
export function throughputLeasePlan(input: {
  readable: readonly string[];
  leases: ReadonlyMap<string, string>;
  members: readonly string[];
  me: string;
  loads: ReadonlyMap<string, ShardLoad>;
  releasing: boolean;
  /** Monotonic ms. */
  now: number;
  /** Since when the plan has wanted this task to give, in every round (none: it did not at the last). */
  givingSince: number | undefined;
}): LeasePlan & BalanceView & { givingSince: number | undefined } {
  const members = input.members.includes(input.me) ? input.members : [...input.members, input.me];
  const joining = members.some((m) => m.startsWith(NOT_JOINED_PREFIX));
  const plan = planBalance({
    members,
    readable: input.readable,
    owners: input.leases,
    loads: input.loads,
    options: joining ? { maxMoves: 0 } : undefined,
  });
  const candidates = [...plan.place].filter(([, to]) => to === input.me).map(([shardId]) => shardId);
  const away = plan.moves.filter((m) => m.from === input.me);
  const givingSince = away.some((m) => m.why === 'load') ? (input.givingSince ?? input.now) : undefined;
  const settled = givingSince !== undefined && input.now - givingSince >= GIVE_AFTER_MS;
  const ready = away.filter((m) => m.why === 'floor' || settled).map((m) => m.shardId);
  const release = input.releasing ? [] : ready.slice(0, 1);
  return {
    candidates,
    want: candidates.length,
    release,
    givingSince,
    loadOf: plan.loadOf,
    reasons: new Map(release.map((id) => [id, moveReason(plan.loadOf, plan.shardLoad.get(id) ?? 0, input.me)])),
  };
}

/** Why a lease moves, for the log: what each task holds and what the shard weighs, as reckoned. */
function moveReason(loadOf: ReadonlyMap<string, number>, shard: number, me: string): string {
  const loads = [...loadOf.values()];
  const mean = loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length);
  const others = [...loadOf]
    .filter(([m]) => m !== me)
    .map(([m, l]) => `${m} ${Math.round(l)}`)
    .join(', ');
  return `balance by throughput: this task holds ${Math.round(loadOf.get(me) ?? 0)} B/s against a mean of ${Math.round(mean)}, the shard ${Math.round(shard)} B/s; others: ${others}`;
}

/**
 * How long a shard's load read before is believed when its lease node no longer holds one: a moved shard's
 * new holder publishes only after its warm-up, and meanwhile the load is the same stream's.
 */
export const REMEMBER_LOAD_MS = 60_000;

/** The loads in the lease nodes, and for `REMEMBER_LOAD_MS` those of shards whose node no longer holds one. */
export class LeaseLoadCache {
  private seen = new Map<string, { load: ShardLoad; at: number }>();

  constructor(private readonly now: () => number) {}

  /** `watch` is called once at the next change of leases/ (a load published is one). */
  async current(store: Pick<CoordinationStore, 'leaseNodes'>, watch: () => void): Promise<Map<string, ShardLoad>> {
    const now = this.now();
    for (const [shardId, load] of loadsOf(await store.leaseNodes(watch))) this.seen.set(shardId, { load, at: now });
    for (const [shardId, { at }] of this.seen) if (now - at > REMEMBER_LOAD_MS) this.seen.delete(shardId);
    return new Map([...this.seen].map(([shardId, { load }]) => [shardId, load]));
  }
}
