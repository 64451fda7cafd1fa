/**
 * Balance by throughput (config `balance: "throughput"`): where each free shard should go and which held
 * leases should move, from the loads the holders publish with their leases. Pure; every task computes the
 * same plan from the same state and carries out its own part of it (hands over what leaves it, takes what
 * is placed on it), so no leader is needed.
 *
 * The rule: keep every task within `band` (±10 %) of the mean bytes/s, or as close as single moves of whole
 * shards allow; no task below the count floor (one shard, when there are as many shards as tasks) while
 * another has more; at most `maxMoves` moves per plan; and a move only when it gains more than the
 * hysteresis, so load that wobbles does not send a lease back and forth. A move takes `shard` from a task
 * whose load minus it stays above the receiver's by the hysteresis, so once its lease is free the same
 * placement rule never sends it back to its giver.
 */

import { LOAD_STEP_BYTES_PER_SEC, type ShardLoad } from '../core/load';

export interface BalanceOptions {
  /** Allowed deviation from the mean bytes/s per task, as a fraction of it. */
  band: number;
  /** A move must leave its giver above its receiver by this fraction of the mean (the hysteresis). */
  hysteresis: number;
  /** Lease moves per plan. */
  maxMoves: number;
  /**
   * A shard's bytes/s is reckoned at no less than this: loads below it are not told apart, so shards that
   * deliver next to nothing are shared by count.
   */
  minShardBytesPerSec: number;
}

export const DEFAULT_BALANCE: BalanceOptions = {
  band: 0.1,
  hysteresis: 0.05,
  maxMoves: 2,
  minShardBytesPerSec: 2 * LOAD_STEP_BYTES_PER_SEC,
};

export interface BalanceInput {
  /** The live tasks to share among. */
  members: readonly string[];
  /** Shards that may be read now. */
  readable: readonly string[];
  /** Lease holder by shard (any task, live or not). */
  owners: ReadonlyMap<string, string>;
  /** Published loads; a shard without one is unknown. */
  loads: ReadonlyMap<string, ShardLoad>;
  options?: Partial<BalanceOptions>;
}

export interface LeaseMove {
  shardId: string;
  from: string;
  to: string;
  /** Why: a task below the count floor (counts, always current), or the loads (as last published). */
  why: 'floor' | 'load';
}

export interface BalancePlan {
  /** Free readable shards and the task that should take each. */
  place: Map<string, string>;
  /** Held leases to hand over. Only planned while every held shard's load is known. */
  moves: LeaseMove[];
  /** Each member's load before the moves (bytes/s as reckoned, free shards placed), for logs and metrics. */
  loadOf: Map<string, number>;
  /** Each counted shard's load as reckoned (bytes/s; unknown ones estimated). */
  shardLoad: Map<string, number>;
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Fewest shards a task should hold: one while there are at least as many shards as tasks. */
export function countFloor(shards: number, tasks: number): number {
  return tasks > 0 && shards >= tasks ? 1 : 0;
}

/**
 * The bytes/s the planner reckons with per shard: no less than `minShardBytesPerSec`, unknown ones at the
 * mean of the known (without any: all equal, so shared by count).
 */
export function effectiveLoads(
  shards: readonly string[],
  loads: ReadonlyMap<string, ShardLoad>,
  minShardBytesPerSec: number,
): Map<string, number> {
  const reckoned = (id: string) => {
    const bytes = loads.get(id)?.bytesPerSec;
    return bytes !== undefined && bytes >= 0 ? Math.max(bytes, minShardBytesPerSec) : undefined;
  };
  const known = shards.map(reckoned).filter((b): b is number => b !== undefined);
  const mean = known.length === 0 ? minShardBytesPerSec : known.reduce((a, b) => a + b, 0) / known.length;
  // A small cost per shard, so that idle shards spread by count rather than pile up on one task.
  const base = mean / 100;
  return new Map(shards.map((id) => [id, (reckoned(id) ?? mean) + base]));
}

export function planBalance(input: BalanceInput): BalancePlan {
  const options = { ...DEFAULT_BALANCE, ...input.options };
  const members = [...new Set(input.members)].sort(byName);
  const live = new Set(members);
  const place = new Map<string, string>();
  const moves: LeaseMove[] = [];
  const loadOf = new Map<string, number>(members.map((m) => [m, 0]));
  if (members.length === 0) return { place, moves, loadOf, shardLoad: new Map() };
  // Shards held by a task that is not live are neither free nor movable: they count for no one.
  const counted = input.readable.filter((id) => {
    const owner = input.owners.get(id);
    return owner === undefined || live.has(owner);
  });
  const load = effectiveLoads(counted, input.loads, options.minShardBytesPerSec);
  const shardsOf = new Map<string, string[]>(members.map((m) => [m, []]));
  const free: string[] = [];
  for (const id of counted) {
    const owner = input.owners.get(id);
    if (owner === undefined) free.push(id);
    else {
      shardsOf.get(owner)!.push(id);
      loadOf.set(owner, loadOf.get(owner)! + load.get(id)!);
    }
  }
  const floor = countFloor(counted.length, members.length);
  const count = (m: string) => shardsOf.get(m)!.length;
  // Free shards, heaviest first, each to the task below the floor, else the least loaded (then fewest shards, name).
  free.sort((a, b) => load.get(b)! - load.get(a)! || byName(a, b));
  for (const id of free) {
    const to = members.reduce((best, m) => (better(m, best) ? m : best));
    place.set(id, to);
    shardsOf.get(to)!.push(id);
    loadOf.set(to, loadOf.get(to)! + load.get(id)!);
  }
  function better(m: string, than: string): boolean {
    const below = (x: string) => (count(x) < floor ? 0 : 1);
    return (
      (below(m) - below(than) || loadOf.get(m)! - loadOf.get(than)! || count(m) - count(than) || byName(m, than)) < 0
    );
  }
  const before = new Map(loadOf);
  const heldKnown = counted.every((id) => input.owners.get(id) === undefined || input.loads.has(id));
  if (!heldKnown) return { place, moves, loadOf: before, shardLoad: load };
  const total = [...loadOf.values()].reduce((a, b) => a + b, 0);
  const mean = total / members.length;
  const margin = options.hysteresis * mean;
  const movable = new Set(counted.filter((id) => input.owners.get(id) !== undefined));
  while (moves.length < options.maxMoves) {
    const needy = members.filter((m) => count(m) < floor);
    const outside = members.some((m) => Math.abs(loadOf.get(m)! - mean) > options.band * mean);
    if (needy.length === 0 && !outside) break;
    const move = needy.length > 0 ? floorMove(needy) : bestMove();
    if (!move) break;
    moves.push(move);
    movable.delete(move.shardId);
    const s = load.get(move.shardId)!;
    const from = shardsOf.get(move.from)!;
    from.splice(from.indexOf(move.shardId), 1);
    shardsOf.get(move.to)!.push(move.shardId);
    loadOf.set(move.from, loadOf.get(move.from)! - s);
    loadOf.set(move.to, loadOf.get(move.to)! + s);
  }
  return { place, moves, loadOf: before, shardLoad: load };

  /** A move into the first task below the floor, from a task above it, the one that evens the loads best. */
  function floorMove(needy: string[]): LeaseMove | undefined {
    const to = needy[0];
    let best: { move: LeaseMove; gain: number } | undefined;
    for (const from of members) {
      if (count(from) <= Math.max(floor, 1)) continue;
      for (const shardId of shardsOf.get(from)!) {
        if (!movable.has(shardId)) continue;
        const gain = gainOf(from, to, shardId);
        if (!best || gain > best.gain) best = { move: { shardId, from, to, why: 'floor' }, gain };
      }
    }
    return best?.move;
  }

  /** The single move that lowers the spread of loads most, if it gains more than the hysteresis. */
  function bestMove(): LeaseMove | undefined {
    let best: { move: LeaseMove; gain: number } | undefined;
    for (const from of members) {
      if (count(from) <= floor) continue;
      for (const to of members) {
        if (to === from) continue;
        for (const shardId of shardsOf.get(from)!) {
          if (!movable.has(shardId)) continue;
          const s = load.get(shardId)!;
          // The giver keeps more than the receiver gets, by the margin: no way back for the same lease.
          if (loadOf.get(from)! - s - loadOf.get(to)! < margin) continue;
          const gain = gainOf(from, to, shardId);
          if (!best || gain > best.gain) best = { move: { shardId, from, to, why: 'load' }, gain };
        }
      }
    }
    return best?.move;
  }

  /** How much the sum of squared deviations from the mean falls when `shardId` moves (halved). */
  function gainOf(from: string, to: string, shardId: string): number {
    const s = load.get(shardId)!;
    return s * (loadOf.get(from)! - loadOf.get(to)! - s);
  }
}
