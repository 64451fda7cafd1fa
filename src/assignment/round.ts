/**
 * The assignment round: read who holds what (watched), take a listing when the cache cannot serve, let the
 * policy (policy.ts) read what it plans from, plan (plan.ts), and carry the plan out: stop shards whose lease was lost, drain expired ones, hand over
 * beyond the share, reconcile lease nodes of this session not held here, take free shards up to the share.
 * One round at a time; asking during one runs one more after it. Failures are reported as they persist.
 */
import type { SpoutConfig } from '../config/config';
import type { CoordinationStore } from '../coordination/store';
import type { ZooKeeper } from '../coordination/zooKeeper';
import type { PhaseKind } from '../core/phase';
import type { Position } from '../core/position';
import type { Scheduler } from '../core/scheduler';
import type { ShardNode } from '../core/shard';
import { startGraceMs } from '../core/timings';
import { withNotJoined } from './byCount';
import { isThrottling } from '../kinesis/errors';
import { roundFailure } from './failures';
import { LogLevel, type Reporter } from '../core/log';
import { planRound, strayLeases } from './plan';
import { type AssignmentPolicy, policyFor } from './policy';
import type { ShardListing } from './listing';
import { deployView } from './topologies';
import type { MemberPresence } from '../coordination/store';
import { HolderCountsPublisher, leaseCounts, publishedCounts } from './holderCounts';

const SLOW_ASSIGNMENT_MS = 2_000;
/**
 * Leases a round tries to take at once at first, and refused creates after which it takes its view for
 * stale: a task owed many shards takes them together, not one after another.
 */
export const TAKES_AT_ONCE = 8;
/**
 * Takes at once at most, one more for each take that succeeds: a task owed 128 new shards in a doubling took
 * them 8 at a time (a lease create, then the checkpoint's), its last ones 0.5 s after the first in the
 * simulation at 4,096 x 64, while a stale view still costs no more than TAKES_AT_ONCE refused creates.
 */
export const MOST_TAKES_AT_ONCE = 32;
/** Watches that fire within this are answered by one round. */
export const WATCH_COALESCE_MS = 100;
/** A failed round is tried again after this, doubling up to the rebalance interval, each wait jittered. */
const RETRY_FIRST_MS = 200;

/** What a round needs of the session. */
export interface RoundSession {
  store: Pick<
    CoordinationStore,
    | 'memberId'
    | 'finishedShards'
    | 'leases'
    | 'leaseNodes'
    | 'members'
    | 'memberStates'
    | 'updateMember'
    | 'endedShards'
    | 'acquireLease'
    | 'releaseLease'
    | 'holderCounts'
    | 'writeHolderCounts'
  >;
  zk: Pick<ZooKeeper, 'connectionState' | 'sessionTimeoutMs'>;
  /** Monotonic time the join completed. */
  joinedAt: number;
  startOf(shardId: string): Position;
}

export interface RoundShard {
  readonly shardId: string;
  readonly phase: { readonly kind: PhaseKind };
}

/** What a round needs of the shards held here (HeldShards). */
export interface HeldLeases<Sess, S extends RoundShard> {
  readonly byId: ReadonlyMap<string, S>;
  /** A mark to tell, later, which shards were let go after it. */
  readonly letGoMark: number;
  letGoSince(shardId: string, mark: number): boolean;
  /** True while a shard is left alone here: its start failed, or it was taken and given back in a loop. */
  backingOff(shardId: string): boolean;
  forget(shard: S): void;
  drain(shard: S): void;
  beginRelease(shard: S, reason: string): void;
  /** The lease is ours: read the shard. `leasedBefore`: it was seen with a lease before, so it has a checkpoint. */
  start(session: Sess, shardId: string, leasedBefore?: boolean): Promise<void>;
}

export interface RoundDeps<Sess extends RoundSession, S extends RoundShard> {
  config: SpoutConfig;
  scheduler: Scheduler;
  reporter: Reporter;
  /** How the stream is named in messages. */
  streamLabel: string;
  /** Spout tasks the topology declares (shares during the start grace). */
  taskCount: number;
  held: HeldLeases<Sess, S>;
  listing: ShardListing;
  /** The current session, if joined and not dropped. */
  session(): Sess | undefined;
  /** False (after refusing the stream and dropping the session) when the stream is not the checkpoints' one. */
  streamStillHolds(session: Sess): Promise<boolean>;
  /** After a fresh listing, by the first member: forget expired shards' state. */
  listed(session: Sess, shards: readonly ShardNode[]): void;
  /** Reading is allowed (the topology is active and the process not stopping). */
  mayRead(): boolean;
  /** The process is stopping: no round runs. */
  stopping(): boolean;
  /**
   * This task's topology and whether Storm has it active (topologies.ts); the round sets `standby` and keeps
   * the member node in step.
   */
  presence: MemberPresence;
  /** A Kinesis call was throttled. */
  throttled(): void;
}

export class AssignmentRound<Sess extends RoundSession, S extends RoundShard> {
  private running: Promise<void> | undefined;
  private again = false;
  private failures = 0;
  private retry: (() => void) | undefined;
  /** How this task shares the shards with the others, from `config.balance`. */
  private readonly policy: AssignmentPolicy;
  /**
   * One watch callback for every path (the client keeps each distinct callback until the watch fires). What
   * the watches bring within WATCH_COALESCE_MS is read in one round: a reshard fires them hundreds of times,
   * and a round per firing read the folders again each time, on every task.
   */
  private readonly onWatch = () => {
    if (this.coalescing) return;
    this.coalescing = this.deps.scheduler.after(WATCH_COALESCE_MS, () => {
      this.coalescing = undefined;
      this.schedule();
    });
  };
  private coalescing: (() => void) | undefined;

  /** As the first member, by count: the lease counts of every member, for the others to plan from. */
  private readonly counts: HolderCountsPublisher;
  /** The session the counts were written in (a new one writes them again). */
  private countsSession: Sess | undefined;
  /** How many members shared the shards at the last planned round (the tasks declared, before one). */
  private sharing: number;
  /**
   * Readable shards seen with a lease at a round: each has a checkpoint (a holder writes one before it reads),
   * so a take reads it at once instead of trying to create it first (a refused create is a write).
   */
  private readonly leasedBefore = new Set<string>();

  constructor(private readonly deps: RoundDeps<Sess, S>) {
    this.policy = policyFor(deps.config, () => deps.scheduler.now());
    this.sharing = deps.taskCount;
    this.counts = new HolderCountsPublisher({
      scheduler: deps.scheduler,
      write: (counts) => this.countsSession?.store.writeHolderCounts(counts) ?? Promise.resolve(),
      failed: (err) => deps.reporter.log(LogLevel.Warn, `could not publish the lease counts: ${String(err)}`),
    });
  }

  /** Members the shards were shared among at the last planned round (before one: the tasks the topology declares). */
  get membersSharing(): number {
    return this.sharing;
  }

  /** Runs a round now, or once more after the one running. */
  schedule(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run()
      .then(() => {
        this.failures = 0;
      })
      .catch((err) => this.failed(err))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
  }

  /** Resolves when no round runs (for tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private failed(err: unknown): void {
    this.failures += 1;
    this.retryLater();
    if (isThrottling(err)) this.deps.throttled();
    const failure = roundFailure(err, this.failures, this.deps.config, this.deps.streamLabel);
    if (failure.report) this.deps.reporter.problem(failure.key, failure.reportMessage);
    else this.deps.reporter.log(LogLevel.Warn, failure.message);
    if (failure.notFound) this.deps.listing.relist(true);
  }

  /**
   * A round that failed (a read whose watch may not be armed, a take refused by a lost connection) runs
   * again soon, not only at the next periodic round; jittered (0.5 to 1.5 times the wait) so that the tasks
   * a fault hit together do not retry in step.
   */
  private retryLater(): void {
    if (this.retry) return;
    const { scheduler, config } = this.deps;
    const wait = Math.min(config.rebalanceIntervalMs, RETRY_FIRST_MS * 2 ** (this.failures - 1));
    this.retry = scheduler.after(wait * (0.5 + scheduler.random()), () => {
      this.retry = undefined;
      this.schedule();
    });
  }

  private async run(): Promise<void> {
    const session = this.deps.session();
    if (!session || this.deps.stopping() || session.zk.connectionState !== 'connected') {
      this.policy.paused();
      return;
    }
    const began = this.deps.scheduler.now();
    try {
      await this.assign(session);
    } finally {
      const took = this.deps.scheduler.now() - began;
      if (took > SLOW_ASSIGNMENT_MS)
        this.deps.reporter.log(LogLevel.Warn, `shard assignment took ${Math.round(took)} ms`);
    }
  }

  /**
   * Members to share the shards among. For a grace period after joining (up to the session timeout),
   * tasks the topology declares but that have not joined yet count too: a deploy does not start with one
   * task taking every shard and then handing most of them over.
   */
  private sharingMembers(session: Sess, members: string[]): string[] {
    if (this.deps.scheduler.now() - session.joinedAt >= startGraceMs(session.zk.sessionTimeoutMs)) return members;
    return withNotJoined(members, this.deps.taskCount);
  }

  /**
   * Who shares the shards, and whether this task gives way to another topology (topologies.ts); writes this
   * task's state into its member node when the node says otherwise.
   */
  private async deployView(session: Sess): Promise<ReturnType<typeof deployView>> {
    const { store } = session;
    const { presence, reporter } = this.deps;
    const states = await store.memberStates(this.onWatch);
    const view = deployView(store.memberId, presence, states);
    if (view.presence.standby !== presence.standby)
      reporter.log(
        LogLevel.Info,
        view.presence.standby
          ? 'another topology of this application is active: handing every lease over to it (standby)'
          : 'no other topology of this application is active any more: reading again',
      );
    presence.standby = view.presence.standby;
    const node = states.get(store.memberId);
    if (
      node &&
      (node.active !== presence.active || node.standby !== presence.standby || node.topology !== presence.topology)
    )
      await store.updateMember({ ...presence });
    return view;
  }

  /** On standby: nothing taken, every lease held handed over, stray leases of this session given back. */
  private async giveWay(session: Sess, letGoBefore: number): Promise<void> {
    const { held, reporter } = this.deps;
    this.policy.paused();
    const leases = await session.store.leases(this.onWatch, (err) => reporter.log(LogLevel.Warn, err.message));
    for (const shard of [...held.byId.values()])
      if (shard.phase.kind === 'reading' || shard.phase.kind === 'draining')
        held.beginRelease(shard, 'deploy: another topology of this application is active');
    await this.reconcile(session, leases, letGoBefore, new Set(), new Set());
  }

  private async assign(session: Sess): Promise<void> {
    const { store } = session;
    const { held, listing, reporter } = this.deps;
    const ordering = this.deps.config.ordering;
    const letGoBefore = held.letGoMark;
    const view = await this.deployView(session);
    if (view.givesWay) return this.giveWay(session, letGoBefore);
    if (!this.deps.mayRead()) {
      // Deactivated with no other topology reading (`storm rebalance`, `storm deactivate`): leases stay.
      this.policy.paused();
      return;
    }
    const byCount = this.deps.config.balance === 'count';
    const [finished, allMembers, ended] = await Promise.all([
      store.finishedShards(this.onWatch),
      store.members(this.onWatch),
      ordering === 'parents-emitted' ? store.endedShards(this.onWatch) : new Set<string>(),
    ]);
    // Members that gave way to another topology of the application share nothing (topologies.ts), and the
    // first member's duties (the counts, forgetting expired shards) fall to the first of those who share.
    const members = allMembers.filter((m) => view.sharing.includes(m));
    const first = members[0] === store.memberId;
    // By count, a member other than the first reads the lease names and the counts the first one published.
    const heldElsewhere =
      byCount && !first
        ? publishedCounts(
            store.memberId,
            members,
            await store.holderCounts(this.onWatch),
            this.deps.scheduler.wallNow(),
          )
        : undefined;
    const leases = await store.leases(
      this.onWatch,
      (err) => reporter.problem(`corrupt:${err.message}`, `${err.message}; its shard is not read until then`),
      heldElsewhere !== undefined,
    );
    let shards = listing.cached(finished, leases);
    if (!shards) {
      const fresh = await listing.list();
      if (listing.identityCheckDue) {
        const holds = await this.deps.streamStillHolds(session);
        listing.identityChecked();
        if (!holds) return;
      }
      listing.update(fresh, finished, leases);
      if (first) this.deps.listed(session, fresh);
      shards = fresh;
    }
    await this.policy.observe(store, this.onWatch);
    if (this.deps.session() !== session) return;
    const sharing = this.sharingMembers(session, members);
    this.sharing = sharing.length;
    const plan = planRound({
      me: store.memberId,
      shards,
      finished,
      ended,
      leases,
      members: sharing,
      heldElsewhere,
      ordering,
      held: [...held.byId.values()].map((s) => ({ shardId: s.shardId, phase: s.phase.kind })),
      startOf: session.startOf,
      policy: this.policy,
      now: this.deps.scheduler.now(),
    });
    this.publishCounts(session, byCount && first, () => leaseCounts(leases, members, plan.readable));
    for (const shardId of plan.forget) {
      reporter.log(LogLevel.Warn, `lease on ${shardId} is no longer ours: stopped emitting from it`);
      this.ifHeld(shardId, (shard) => held.forget(shard));
    }
    for (const shardId of plan.drain) {
      // Only an unfiltered listing may say so: the shard expired past retention, nothing more to read.
      reporter.log(
        LogLevel.Warn,
        `${shardId} is not in the stream any more (expired past retention); finishing it once its records are acked`,
      );
      this.ifHeld(shardId, (shard) => held.drain(shard));
    }
    for (const shardId of plan.handOver)
      this.ifHeld(shardId, (shard) =>
        held.beginRelease(shard, plan.reasons?.get(shardId) ?? 'rebalance: another task is owed a share'),
      );
    const readable = new Set(plan.readable);
    // Kept to the readable shards: a finished or expired one is never taken again.
    for (const shardId of leases.keys()) this.leasedBefore.add(shardId);
    for (const shardId of this.leasedBefore) if (!readable.has(shardId)) this.leasedBefore.delete(shardId);
    await this.reconcile(session, leases, letGoBefore, readable, new Set(plan.release));
    await this.take(session, plan.candidates, plan.want);
  }

  private publishCounts(session: Sess, publish: boolean, counts: () => Map<string, number>): void {
    if (!publish || this.countsSession !== session) {
      this.counts.reset();
      this.countsSession = publish ? session : undefined;
    }
    if (publish) this.counts.publish(counts());
  }

  /**
   * Takes up to `want` of the candidates, best first, TAKES_AT_ONCE at a time, one more for each take that
   * succeeds up to MOST_TAKES_AT_ONCE: each a lease create, then the shard's start (its checkpoint read). A
   * refused create (another task was first) moves on to the next one; after TAKES_AT_ONCE refusals the list
   * is taken for stale (other tasks are taking shards too) and the round ends: each refused create was
   * another task's lease, whose `leases/` watch has already asked for the next round, on the view it brings.
   * Walking a stale list of hundreds of shards, one refused create after another, kept the last shards of a
   * deploy unread for seconds.
   */
  private async take(session: Sess, candidates: readonly string[], want: number): Promise<void> {
    const { held } = this.deps;
    const { store } = session;
    let next = 0;
    let owed = want;
    let refused = 0;
    const workers: Promise<void>[] = [];
    const more = () => owed > 0 && next < candidates.length && refused < TAKES_AT_ONCE;
    const worker = async () => {
      while (more()) {
        if (this.deps.session() !== session || !this.deps.mayRead()) return;
        const shardId = candidates[next++]!;
        if (held.byId.has(shardId) || held.backingOff(shardId)) continue;
        owed -= 1;
        if (await store.acquireLease(shardId)) {
          if (workers.length < Math.min(MOST_TAKES_AT_ONCE, want) && more()) workers.push(worker());
          await held.start(session, shardId, this.leasedBefore.has(shardId));
        } else {
          owed += 1;
          refused += 1;
        }
      }
    };
    for (let i = 0; i < Math.min(TAKES_AT_ONCE, want); i += 1) workers.push(worker());
    // Workers join while others run: every one settled, then the first failure thrown.
    const outcomes: PromiseSettledResult<void>[] = [];
    while (outcomes.length < workers.length)
      outcomes.push(...(await Promise.allSettled(workers.slice(outcomes.length))));
    const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failure) throw failure.reason;
  }

  private ifHeld(shardId: string, act: (shard: S) => void): void {
    const shard = this.deps.held.byId.get(shardId);
    if (shard) act(shard);
  }

  /**
   * A lease node of our session that this process does not hold is ours all the same: its create was
   * applied and the reply lost, or a release did not get through. Read it, or give it back; never orphan it.
   * A shard let go since `leases` was read is not one: its lease is gone or going.
   */
  private async reconcile(
    session: Sess,
    leases: ReadonlyMap<string, string>,
    letGoBefore: number,
    readable: ReadonlySet<string>,
    release: ReadonlySet<string>,
  ): Promise<void> {
    const { held, reporter } = this.deps;
    const mayRead = (id: string) => !held.backingOff(id) && this.deps.mayRead();
    const letGo = (id: string) => held.letGoSince(id, letGoBefore);
    const isHeld = (id: string) => held.byId.has(id);
    const me = session.store.memberId;
    for (const { shardId, action } of strayLeases({
      me,
      leases,
      isHeld,
      letGoSince: letGo,
      readable,
      release,
      mayRead,
    })) {
      // Each step awaits: what was true when the leases were read is checked again.
      if (this.deps.session() !== session || isHeld(shardId) || letGo(shardId)) continue;
      if (action === 'read' && mayRead(shardId)) {
        reporter.log(LogLevel.Info, `lease on ${shardId} is ours but was not held here (a lost reply): reading it`);
        await held.start(session, shardId);
      } else {
        reporter.log(LogLevel.Info, `lease on ${shardId} is ours but not wanted here (a lost reply): giving it back`);
        await session.store.releaseLease(shardId);
      }
    }
  }
}
