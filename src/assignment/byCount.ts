/**
 * Balance by count (config `balance: "count"`, the default): every task holds within one shard of the others,
 * the extra shares placed so that a change moves as few leases as possible, and free shards tried in an
 * order that keeps tasks starting together from racing for the same ones. Pure, but for the policy object at
 * the end, which holds nothing that changes.
 */
import { taskIndexOf } from '../coordination/layout';
import type { AssignmentPolicy, LeasePlan, PolicyInput } from './policy';

/** FNV-1a: a stable, well-spread score so each member prefers different shards (fewer create races). */
export function preferenceScore(member: string, shardId: string): number {
  let hash = 0x811c9dc5;
  const text = `${member}\u0000${shardId}`;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Names a task the topology declares that has not joined yet (the start grace counts it as a member). Such
 * a member takes the extra shares first: a task that joins early takes only what it keeps whoever joins
 * after it, so the first tasks of a deploy never hold a shard they must hand over once the others come.
 */
export const NOT_JOINED_PREFIX = '~not-joined-yet-';

/**
 * A member's seat in the ideal placement: its task's index (`task3`), the same for the task before it joins
 * (its NOT_JOINED_PREFIX name carries the index) and after, so that tasks joining during a start do not
 * move the placement. A name of another form is its own seat.
 */
export function placementKey(member: string): string {
  if (member.startsWith(NOT_JOINED_PREFIX)) return `task${member.slice(NOT_JOINED_PREFIX.length)}`;
  const index = taskIndexOf(member);
  return index === undefined ? member : `task${index}`;
}

/**
 * `members` and a NOT_JOINED_PREFIX placeholder for each of the `taskCount` declared tasks missing, named by
 * the lowest task indexes no member holds, so that a task keeps its seat in the placement once it joins.
 */
export function withNotJoined(members: readonly string[], taskCount: number): string[] {
  const missing = taskCount - members.length;
  const seated = new Set(members.map(placementKey));
  const waiting: string[] = [];
  for (let index = 0; waiting.length < missing; index += 1)
    if (!seated.has(`task${index}`)) waiting.push(`${NOT_JOINED_PREFIX}${index}`);
  return [...members, ...waiting];
}

/**
 * Where every readable shard would go if none were held: each shard, in id order, to the seat that scores it
 * highest (preferenceScore) and still has room; the seats hold floor(S/K) each, the first S mod K of them by
 * name one more. It depends only on the shards and the seats, not on anyone's lease counts (which tasks see
 * at different moments), so tasks that start together compute the same placement and try disjoint shards
 * first: a create refused because another task took the shard first costs a round trip and ends a round.
 */
export function idealPlacement(readable: readonly string[], seatsOf: readonly string[]): Map<string, string> {
  const seats = [...new Set(seatsOf)].sort();
  const placement = new Map<string, string>();
  if (seats.length === 0) return placement;
  const floor = Math.floor(readable.length / seats.length);
  const extra = readable.length % seats.length;
  const room = seats.map((_, i) => floor + (i < extra ? 1 : 0));
  for (const shardId of [...readable].sort()) {
    let best = -1;
    let bestScore = -1;
    // Seats in name order: a tie goes to the first.
    for (let i = 0; i < seats.length; i += 1) {
      if (room[i] <= 0) continue;
      const score = preferenceScore(seats[i], shardId);
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    placement.set(shardId, seats[best]);
    room[best] -= 1;
  }
  return placement;
}

/** idealPlacement, computed again only when the shards or the seats change (S x K scores each time). */
export function placementMemo(): typeof idealPlacement {
  let last: { readable: readonly string[]; seats: string; placement: Map<string, string> } | undefined;
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  return (readable, seatsOf) => {
    const seats = [...new Set(seatsOf)].sort().join('\n');
    if (last && last.seats === seats && same(last.readable, readable)) return last.placement;
    last = { readable: [...readable], seats, placement: idealPlacement(readable, seatsOf) };
    return last.placement;
  };
}

/**
 * How many shards each member should hold: within one of each other, and the extra ones go to the
 * members not joined yet, then to those that already hold the most, so a change moves as few leases as
 * possible; among equals, by name, the order turned by `rotation` places: the streams of one process
 * (`streams`, rotation = the stream's index) give their extra shards to different tasks, so that the
 * tasks' totals over all streams stay close too.
 */
export function shareTargets(
  members: readonly string[],
  held: ReadonlyMap<string, number>,
  total: number,
  rotation = 0,
): Map<string, number> {
  const targets = new Map<string, number>();
  if (members.length === 0) return targets;
  const floor = Math.floor(total / members.length);
  let extra = total % members.length;
  const notJoined = (member: string) => (member.startsWith(NOT_JOINED_PREFIX) ? 0 : 1);
  const n = members.length;
  const turn = rotation % n;
  const rank = new Map([...members].sort().map((m, i) => [m, (i - turn + n) % n]));
  const byHolding = [...members].sort(
    (a, b) => notJoined(a) - notJoined(b) || (held.get(b) ?? 0) - (held.get(a) ?? 0) || rank.get(a)! - rank.get(b)!,
  );
  for (const member of byHolding) {
    targets.set(member, floor + (extra > 0 ? 1 : 0));
    extra -= 1;
  }
  return targets;
}

/**
 * What `me` should do with leases. `leases` maps shard to holder (any task, live or not); only readable
 * shards count towards shares. Members not in `members` (not registered yet) are not given shares.
 */
export function planLeases(input: {
  readable: readonly string[];
  leases: ReadonlyMap<string, string>;
  members: readonly string[];
  me: string;
  /** The other members' lease counts, when `leases` does not name their holders (see PolicyInput). */
  heldElsewhere?: ReadonlyMap<string, number>;
  /** See shareTargets. */
  rotation?: number;
  /** idealPlacement or a memo of it (placementMemo). */
  placement?: typeof idealPlacement;
}): LeasePlan {
  const { readable, leases, me } = input;
  const members = input.members.includes(me) ? input.members : [...input.members, me];
  const held = new Map<string, number>();
  const mine: string[] = [];
  const free: string[] = [];
  for (const shardId of readable) {
    const owner = leases.get(shardId);
    if (owner === undefined) free.push(shardId);
    else {
      held.set(owner, (held.get(owner) ?? 0) + 1);
      if (owner === me) mine.push(shardId);
    }
  }
  for (const [member, count] of input.heldElsewhere ?? []) if (member !== me) held.set(member, count);
  const target = shareTargets(members, held, readable.length, input.rotation).get(me) ?? 0;
  const byPreference = (list: string[]) => list.sort((a, b) => preferenceScore(me, b) - preferenceScore(me, a));
  if (mine.length > target) {
    return { candidates: [], want: 0, release: byPreference(mine).slice(target) };
  }
  const want = target - mine.length;
  if (want <= 0) return { candidates: [], want, release: [] };
  // Holding some already (a reshard, a failover), a task keeps the rendezvous order: it is stable shard by
  // shard, while the placement of every shard moves as the readable shards come one by one (more races).
  if (mine.length > 0) return { candidates: byRendezvous(free, members, me), want, release: [] };
  const seat = placementKey(me);
  const placement = (input.placement ?? idealPlacement)(readable, members.map(placementKey));
  const placedHere = free.filter((shardId) => placement.get(shardId) === seat);
  const elsewhere = free.filter((shardId) => placement.get(shardId) !== seat);
  return { candidates: [...byPreference(placedHere), ...byRendezvous(elsewhere, members, me)], want, release: [] };
}

/**
 * Free shards in the order `me` should try them: first those `me` scores highest of all members (each
 * shard has one such member, so tasks that start together try different shards and their creates do not
 * collide), then those where it comes second, and so on; among equals, by its own score.
 */
function byRendezvous(free: readonly string[], members: readonly string[], me: string): string[] {
  const others = members.filter((m) => m !== me);
  const ranked = free.map((shardId) => {
    const mine = preferenceScore(me, shardId);
    let rank = 0;
    for (const other of others) {
      const score = preferenceScore(other, shardId);
      if (score > mine || (score === mine && other < me)) rank += 1;
    }
    return { shardId, rank, mine };
  });
  ranked.sort((a, b) => a.rank - b.rank || b.mine - a.mine);
  return ranked.map((r) => r.shardId);
}

/** The count policy: `rotation` is the stream's index among the process's streams (see shareTargets). */
export class ByCount implements AssignmentPolicy {
  private readonly placement = placementMemo();

  constructor(private readonly rotation: number) {}

  async observe(): Promise<void> {}

  plan(input: PolicyInput): LeasePlan {
    return planLeases({ ...input, rotation: this.rotation, placement: this.placement });
  }

  paused(): void {}
}
