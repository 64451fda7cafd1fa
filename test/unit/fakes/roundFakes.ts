/** Hand-written collaborators of the assignment round, named by what the test makes the world do. */
import type { PhaseKind } from '../../../src/core/phase';
import type { ConnectionState } from '../../../src/coordination/zooKeeper';
import type { Position } from '../../../src/core/position';
import type { ShardNode } from '../../../src/core/shard';
import type { HeldLeases, RoundSession } from '../../../src/assignment/round';
import type { ShardLister } from '../../../src/assignment/listing';
import type { MemberPresence } from '../../../src/coordination/store';

/** The coordination state as ZooKeeper holds it: leases, members, finished shards. */
export class TestCoordinationState {
  readonly leases = new Map<string, string>();
  readonly finished = new Set<string>();
  members: string[];
  acquired: string[] = [];
  /** What each member's node says of its topology (absent: an older release's node, reading). */
  readonly presence = new Map<string, Partial<MemberPresence>>();
  /** The lease counts this task published (as the first member, by count), in order. */
  readonly countWrites: ReadonlyMap<string, number>[] = [];
  /** This task's member node writes, in order. */
  readonly memberWrites: MemberPresence[] = [];
  /** Rounds that read the state (each reads the finished shards once). */
  rounds = 0;
  private watches: (() => void)[] = [];

  constructor(readonly memberId: string) {
    this.members = [memberId];
  }

  setOtherMembers(...others: string[]): void {
    this.members = [this.memberId, ...others].sort();
    this.fireWatches();
  }

  /** A member's node now says this of its topology (a data watch fires). */
  setPresence(memberId: string, presence: Partial<MemberPresence>): void {
    this.presence.set(memberId, presence);
    this.fireWatches();
  }

  setLeaseHeldBy(shardId: string, owner: string): void {
    this.leases.set(shardId, owner);
  }

  /** What a watch firing does: every watcher is told once. */
  fireWatches(): void {
    for (const watch of this.watches.splice(0)) watch();
  }

  // The store's methods the round calls.
  async finishedShards(watch?: () => void) {
    this.rounds += 1;
    if (watch) this.watches.push(watch);
    return new Set(this.finished);
  }
  async leases_(watch?: () => void) {
    if (watch) this.watches.push(watch);
    return new Map(this.leases);
  }
  async members_(watch?: () => void) {
    if (watch) this.watches.push(watch);
    return [...this.members];
  }
  async memberStates(watch: () => void) {
    this.watches.push(watch);
    return new Map(this.members.map((id) => [id, { ...this.presence.get(id) }]));
  }
  async updateMember(presence: MemberPresence) {
    this.memberWrites.push({ ...presence });
    this.presence.set(this.memberId, { ...presence });
    return true;
  }
  async endedShards() {
    return new Set<string>();
  }
  async acquireLease(shardId: string) {
    if (this.leases.has(shardId)) return false;
    this.leases.set(shardId, this.memberId);
    this.acquired.push(shardId);
    return true;
  }
  async releaseLease(shardId: string) {
    if (this.leases.get(shardId) === this.memberId) this.leases.delete(shardId);
  }
}

/** A session of the test: connected, joined at `joinedAt`, every shard starting at TRIM_HORIZON. */
export function testSession(state: TestCoordinationState, joinedAt = 0, sessionTimeoutMs = 10_000): RoundSession {
  const zk: { connectionState: ConnectionState; sessionTimeoutMs: number } = {
    connectionState: 'connected',
    sessionTimeoutMs,
  };
  return {
    store: {
      memberId: state.memberId,
      finishedShards: (watch) => state.finishedShards(watch),
      leases: (watch) => state.leases_(watch),
      members: (watch) => state.members_(watch),
      memberStates: (watch) => state.memberStates(watch),
      updateMember: (presence) => state.updateMember(presence),
      endedShards: () => state.endedShards(),
      // Loads are read only by the throughput policy; the count policy plans from the lease holders alone.
      leaseNodes: async () => new Map(),
      acquireLease: (shardId) => state.acquireLease(shardId),
      releaseLease: (shardId) => state.releaseLease(shardId),
      // No published counts: every member plans from every lease's holder (the first member's way).
      holderCounts: async () => undefined,
      writeHolderCounts: async (counts) => {
        state.countWrites.push(counts);
      },
    },
    zk,
    joinedAt,
    startOf: (): Position => ({ kind: 'TRIM_HORIZON' }),
  };
}

export interface TestShard {
  shardId: string;
  phase: { kind: PhaseKind };
}

/** The shards held here: started shards read, unless the test says a start gives the lease back at once. */
export class TestHeldShards implements HeldLeases<RoundSession, TestShard> {
  readonly byId = new Map<string, TestShard>();
  letGoMark = 0;
  readonly started: string[] = [];
  readonly handedOver: string[] = [];
  readonly forgotten: string[] = [];
  readonly drained: string[] = [];
  private readonly backingOffShards = new Set<string>();
  private readonly lastLetGo = new Map<string, number>();

  letGoSince(shardId: string, mark: number): boolean {
    return (this.lastLetGo.get(shardId) ?? 0) > mark;
  }
  /** HeldShards leaves `shardId` alone (its start failed, or it was taken and given back in a loop). */
  setBackingOff(shardId: string, backingOff = true): void {
    if (backingOff) this.backingOffShards.add(shardId);
    else this.backingOffShards.delete(shardId);
  }
  backingOff(shardId: string): boolean {
    return this.backingOffShards.has(shardId);
  }
  forget(shard: TestShard): void {
    this.forgotten.push(shard.shardId);
    this.letGo(shard.shardId);
  }
  drain(shard: TestShard): void {
    this.drained.push(shard.shardId);
    shard.phase = { kind: 'draining' };
  }
  beginRelease(shard: TestShard): void {
    this.handedOver.push(shard.shardId);
    shard.phase = { kind: 'releasing' };
  }
  /** Shards started as seen with a lease before (their checkpoint looked for first). */
  readonly startedLeasedBefore: string[] = [];
  async start(_session: RoundSession, shardId: string, leasedBefore = false): Promise<void> {
    this.started.push(shardId);
    if (leasedBefore) this.startedLeasedBefore.push(shardId);
    this.byId.set(shardId, { shardId, phase: { kind: 'reading' } });
  }

  private letGo(shardId: string): void {
    this.byId.delete(shardId);
    this.lastLetGo.set(shardId, ++this.letGoMark);
  }
}

/** A stream whose shards the test sets; counts full listings and where each partial look started. */
export class TestStream implements ShardLister {
  fullListings = 0;
  readonly looksPast: string[] = [];
  private shards: ShardNode[];

  constructor(...shards: ShardNode[]) {
    this.shards = shards;
  }

  setShards(...shards: ShardNode[]): void {
    this.shards = shards;
  }

  async all(): Promise<ShardNode[]> {
    this.fullListings += 1;
    return [...this.shards];
  }

  async after(lastShardId: string): Promise<ShardNode[]> {
    this.looksPast.push(lastShardId);
    return this.shards.filter((s) => s.shardId > lastShardId);
  }
}

export const shard = (shardId: string, parents: string[] = [], closed = false): ShardNode => ({
  shardId,
  parents,
  closed,
});
