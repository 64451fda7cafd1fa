/**
 * Owns the ZooKeeper session and the shards this process holds: takes and gives up leases (fair share,
 * parents first), starts readers at the right position, writes checkpoints and SHARD_END, and starts
 * over with fresh state when the session expires.
 */
import type { SpoutConfig } from '../config/config';
import { streamNameOf } from '../config/config';
import { CoordinationStore, basePath } from '../coordination/store';
import type { ConnectZooKeeper, ZooKeeper } from '../coordination/zooKeeper';
import type { Scheduler } from '../core/scheduler';
import { describeError, ErrorCode, SpoutError } from '../errors';
import type { KinesisApi } from '../kinesis/client';
import type { KinesisRecord } from '../kinesis/records';
import { ShardReader } from '../kinesis/shardReader';
import { describeStream, listShards, listShardsAfter, type StreamRef } from '../kinesis/shards';
import { LogLevel } from '../multilang/protocol';
import { listingIsStale, planLeases, readableShards, type ShardNode } from './assignment';
import { OwnedShard } from './ownedShard';
import { fetchRoom, heldIn } from './memory';
import { describePosition, isNotBehind, startPositions, type Position } from '../core/position';

export interface Logger {
  log(level: LogLevel, message: string): void;
  error(message: string): void;
}

export interface CoordinatorDeps {
  config: SpoutConfig;
  kinesis: KinesisApi;
  zookeeper: ConnectZooKeeper;
  logger: Logger;
  scheduler: Scheduler;
  member: { taskIndex: number; host: string; pid: number };
}

/** What one ZooKeeper session knows; all of it is dropped when the session expires. */
interface SessionState {
  zk: ZooKeeper;
  store: CoordinationStore;
  /** Where a shard without a checkpoint starts, from the bootstrap record. */
  startOf: (shardId: string) => Position;
}

const MAINTENANCE_MS = 100;
const SLOW_ASSIGNMENT_MS = 2_000;
const FULL_LISTING_EVERY = 5;

export interface IoCounters {
  getRecords: number;
  listShards: number;
  checkpointWrites: number;
}

export class Coordinator {
  readonly shards = new Map<string, OwnedShard>();
  readonly io: IoCounters = { getRecords: 0, listShards: 0, checkpointWrites: 0 };
  private readonly stream: StreamRef;
  private session: SessionState | undefined;
  private shardList: ShardNode[] | undefined;
  private active = true;
  private stopped = false;
  private rebalancing: Promise<void> | undefined;
  private rebalanceAgain = false;
  private readonly timers: (() => void)[] = [];
  private readonly flushing = new Set<string>();
  /** Recorded shards missing from the last unfiltered listing. */
  private missingBefore = new Set<string>();
  private syncs = 0;

  constructor(private readonly deps: CoordinatorDeps) {
    this.stream = { streamName: streamNameOf(deps.config), streamArn: deps.config.streamArn };
  }

  private log(level: LogLevel, message: string): void {
    this.deps.logger.log(level, message);
  }

  /** Starts in the background; never throws (failures are logged and retried). */
  start(): void {
    void this.connectLoop();
    const { config } = this.deps;
    this.every(MAINTENANCE_MS, () => this.maintain());
    this.every(config.checkpointIntervalMs, () => void this.flushCheckpoints());
    this.every(config.rebalanceIntervalMs, () => this.scheduleRebalance());
    // Jittered so that many tasks do not list shards in step.
    this.every(config.shardSyncIntervalMs * (0.8 + this.deps.scheduler.random() * 0.4), () => void this.syncShards());
  }

  private every(ms: number, task: () => void): void {
    this.timers.push(this.deps.scheduler.every(ms, task));
  }

  /** Until when (monotonic ms) leases may be trusted; -Infinity without a healthy session. */
  trustedUntil(): number {
    return this.session?.zk.trustedUntil() ?? -Infinity;
  }

  get isActive(): boolean {
    return this.active;
  }

  /** Records of all held shards in memory (prefetched, in flight, acked behind an unacked one). */
  inMemory(): number {
    let total = 0;
    for (const shard of this.shards.values()) total += shard.inMemory;
    return total;
  }

  /** Bytes of the records of all held shards in memory. */
  bytesInMemory(): number {
    return heldIn(this.shards.values()).bytes;
  }

  deactivate(): void {
    this.active = false;
    this.shardList = undefined;
    void this.flushCheckpoints();
  }

  activate(): void {
    this.active = true;
    this.shardList = undefined;
    this.scheduleRebalance();
  }

  private async connectLoop(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt += 1) {
      try {
        this.session = await this.openSession();
        this.log(LogLevel.Info, `joined as ${this.session.store.memberId} (ZooKeeper session ${this.session.zk.sessionId}, state under ${this.session.store.base})`);
        this.scheduleRebalance();
        return;
      } catch (err) {
        if (err instanceof SpoutError && err.code === ErrorCode.StreamMismatch) {
          this.deps.logger.error(err.message);
          this.log(LogLevel.Error, err.message);
          return;
        }
        const delay = Math.min(10_000, 250 * 2 ** Math.min(6, attempt));
        this.log(LogLevel.Warn, `cannot start coordination (attempt ${attempt}): ${describeError(err)}; retrying in ${delay} ms`);
        await this.deps.scheduler.sleep(delay);
      }
    }
  }

  private async openSession(): Promise<SessionState> {
    const { config, member } = this.deps;
    // State changes during connect are covered by connect's own outcome; later ones name this session.
    let connected: ZooKeeper | undefined;
    const zk = await this.deps.zookeeper({
      connect: config.zookeeper.connect,
      sessionTimeoutMs: config.zookeeper.sessionTimeoutMs,
      onState: (state) => connected && this.onZkState(connected, state),
    });
    connected = zk;
    try {
      const memberId = `task${member.taskIndex}-${member.host}-${member.pid}-${zk.sessionId}`;
      const store = new CoordinationStore(zk, basePath(config.zookeeper.root, config.applicationName, this.stream.streamName), memberId);
      await store.ensureLayout();
      const identity = await describeStream(this.deps.kinesis, this.stream);
      const shards = await this.listShards();
      this.shardList = shards;
      const bootstrap = await store.bootstrap({
        v: 1,
        firstStartMs: this.deps.scheduler.wallNow(),
        initialPosition: config.initialPosition,
        streamArn: identity.streamArn,
        streamCreatedMs: identity.createdMs,
        shardsAtStart: shards.map((s) => s.shardId),
        openAtStart: shards.filter((s) => !s.closed).map((s) => s.shardId),
      });
      if (bootstrap.streamArn !== identity.streamArn || bootstrap.streamCreatedMs !== identity.createdMs) {
        throw new SpoutError(
          ErrorCode.StreamMismatch,
          `refusing to read ${identity.streamArn} (created ${new Date(identity.createdMs).toISOString()}): the checkpoints under ${store.base} belong to a stream created ${new Date(bootstrap.streamCreatedMs).toISOString()} (${bootstrap.streamArn}). ` +
            'The stream was deleted and re-created: remove that ZooKeeper path to start over, or use another applicationName.',
        );
      }
      await store.registerMember(member);
      return { zk, store, startOf: startPositions(bootstrap) };
    } catch (err) {
      zk.close();
      throw err;
    }
  }

  private onZkState(zk: ZooKeeper, state: string): void {
    if (this.session?.zk !== zk) return;
    if (state === 'expired') {
      this.log(LogLevel.Warn, `ZooKeeper session ${zk.sessionId} expired: dropping ${this.shards.size} shard(s) and joining again with a new session`);
      this.dropSession();
      void this.connectLoop();
    } else if (state === 'disconnected') {
      this.log(LogLevel.Warn, 'disconnected from ZooKeeper: not emitting until the session is confirmed');
    } else if (state === 'connected') {
      this.log(LogLevel.Info, 'connected to ZooKeeper');
      this.scheduleRebalance();
    }
  }

  /** Forgets everything tied to the current session: its leases may already belong to others. */
  private dropSession(): void {
    for (const shard of this.shards.values()) this.forget(shard);
    this.session?.zk.close();
    this.session = undefined;
  }

  private forget(shard: OwnedShard): void {
    if (shard.phase.kind === 'reading') void shard.phase.reader.stop();
    shard.phase = { kind: 'closing' };
    this.shards.delete(shard.shardId);
  }

  scheduleRebalance(): void {
    if (this.rebalancing) {
      this.rebalanceAgain = true;
      return;
    }
    this.rebalancing = this.rebalance()
      .catch((err) => this.log(LogLevel.Warn, `shard assignment failed: ${describeError(err)}`))
      .finally(() => {
        this.rebalancing = undefined;
        if (this.rebalanceAgain) {
          this.rebalanceAgain = false;
          this.scheduleRebalance();
        }
      });
  }

  private isFinished(session: SessionState, finished: ReadonlySet<string>, shardId: string): boolean {
    return finished.has(shardId) || session.startOf(shardId).kind === 'SHARD_END';
  }

  private async rebalance(): Promise<void> {
    const session = this.session;
    if (!session || !this.active || this.stopped || session.zk.connectionState !== 'connected') return;
    const began = this.deps.scheduler.now();
    try {
      await this.assign(session);
    } finally {
      const took = this.deps.scheduler.now() - began;
      if (took > SLOW_ASSIGNMENT_MS) this.log(LogLevel.Warn, `shard assignment took ${Math.round(took)} ms`);
    }
  }

  private async assign(session: SessionState): Promise<void> {
    const { store } = session;
    const watch = () => this.scheduleRebalance();
    const ordering = this.deps.config.ordering;
    const [finished, leases, members, ended] = await Promise.all([
      store.finishedShards(watch),
      store.leases(watch),
      store.members(watch),
      ordering === 'parents-emitted' ? store.endedShards(watch) : new Set<string>(),
    ]);
    let shards = this.shardList;
    if (!shards || listingIsStale(shards, finished, leases)) {
      shards = await this.listShards();
      this.shardList = shards;
      if (members[0] === store.memberId) void this.forgetExpired(session, shards);
    }
    if (this.session !== session) return;

    for (const shard of this.shards.values()) {
      if (shard.phase.kind !== 'closing' && shard.phase.kind !== 'starting' && leases.get(shard.shardId) !== store.memberId) {
        this.log(LogLevel.Warn, `lease on ${shard.shardId} is no longer ours: stopped emitting from it`);
        this.forget(shard);
      }
    }
    const isFinished = (id: string) => this.isFinished(session, finished, id);
    const parentDone = ordering === 'none' ? () => true : ordering === 'parents-emitted' ? (id: string) => ended.has(id) || isFinished(id) : isFinished;
    const readable = readableShards(shards, isFinished, parentDone);
    const plan = planLeases({ readable, leases, members, me: store.memberId });
    for (const shardId of plan.release) {
      const shard = this.shards.get(shardId);
      if (shard && shard.emitting) this.beginRelease(shard, 'rebalance: another task is owed a share');
    }
    let want = plan.want;
    for (const shardId of plan.candidates) {
      if (want <= 0 || this.session !== session || !this.active) break;
      if (this.shards.has(shardId)) continue;
      if (await store.acquireLease(shardId)) {
        want -= 1;
        await this.startShard(session, shardId);
      }
    }
  }

  /**
   * Drops what ZooKeeper holds about shards the stream no longer lists (expired after retention), so the
   * state does not grow as the stream reshards for months. A shard must be missing from two unfiltered
   * listings in a row; one task (the first member) does it.
   */
  private async forgetExpired(session: SessionState, listing: readonly ShardNode[]): Promise<void> {
    try {
      const listed = new Set(listing.map((s) => s.shardId));
      const missing = [...(await session.store.recordedShards())].filter((id) => !listed.has(id) && !this.shards.has(id));
      const confirmed = missing.filter((id) => this.missingBefore.has(id));
      this.missingBefore = new Set(missing);
      for (const shardId of confirmed) await session.store.forgetShard(shardId);
      if (confirmed.length > 0) this.log(LogLevel.Info, `forgot ${confirmed.length} shard(s) no longer in the stream: ${confirmed.join(', ')}`);
    } catch (err) {
      this.log(LogLevel.Warn, `cleaning up expired shards failed: ${describeError(err)}`);
    }
  }

  private async startShard(session: SessionState, shardId: string): Promise<void> {
    const shard = new OwnedShard(shardId, this.deps.scheduler.now());
    this.shards.set(shardId, shard);
    try {
      const checkpoint = await session.store.checkpointOrStart(shardId, session.startOf(shardId));
      if (this.shards.get(shardId) !== shard) return;
      shard.stored = checkpoint;
      const from = checkpoint.position;
      if (from.kind === 'SHARD_END') {
        this.forget(shard);
        await session.store.releaseLease(shardId);
        return;
      }
      this.log(LogLevel.Info, `lease on ${shardId} taken; reading ${describePosition(from)}`);
      shard.phase = { kind: 'reading', reader: this.readerFor(shard, from) };
      shard.phase.reader.start();
    } catch (err) {
      this.log(LogLevel.Warn, `could not start ${shardId}: ${describeError(err)}; giving its lease back`);
      this.forget(shard);
      await session.store.releaseLease(shardId).catch(() => undefined);
    }
  }

  private readerFor(shard: OwnedShard, from: Exclude<Position, { kind: 'SHARD_END' }>): ShardReader {
    const { config } = this.deps;
    const current = () => this.shards.get(shard.shardId) === shard && shard.phase.kind === 'reading';
    return new ShardReader({
      kinesis: this.deps.kinesis,
      scheduler: this.deps.scheduler,
      stream: this.stream,
      shardId: shard.shardId,
      from,
      maxRecordsPerRequest: config.maxRecordsPerRequest,
      idlePollIntervalMs: config.idlePollIntervalMs,
      events: {
        records: (records: KinesisRecord[]) => {
          shard.reserved = 0;
          if (current()) shard.push(records);
        },
        end: (children) => {
          if (!current()) return;
          this.log(LogLevel.Info, `reshard: ${shard.shardId} read to its end (${shard.fetched} record(s) fetched here)${children.length ? `; children ${children.join(', ')}` : ''}; finishing once its records are acked`);
          this.drain(shard);
        },
        gone: () => {
          if (!current()) return;
          this.log(LogLevel.Warn, `${shard.shardId} is not in the stream any more (expired or deleted); finishing it`);
          this.drain(shard);
        },
        room: () => {
          // What a GetRecords may return is reserved until it answers, so readers together stay under the cap.
          shard.reserved = 0;
          const room = this.active && current() ? fetchRoom(heldIn(this.shards.values()), shard, this.shards.size, config) : 0;
          shard.reserved = room;
          return room;
        },
        log: (level, message) => this.log(level, message),
        requested: () => {
          this.io.getRecords += 1;
        },
      },
    });
  }

  /**
   * Catches shards no reader saw appear: usually a cheap look past the highest known shard id, every
   * FULL_LISTING_EVERY-th time a full listing (the only kind that may show a shard expired).
   */
  private async syncShards(): Promise<void> {
    this.syncs += 1;
    const known = this.shardList;
    if (!known || known.length === 0 || this.syncs % FULL_LISTING_EVERY === 0) {
      this.shardList = undefined;
    } else {
      try {
        this.io.listShards += 1;
        const last = known.map((s) => s.shardId).sort().pop()!;
        if ((await listShardsAfter(this.deps.kinesis, this.stream, last)).length > 0) this.shardList = undefined;
      } catch (err) {
        this.log(LogLevel.Warn, `checking for new shards failed: ${describeError(err)}`);
        return;
      }
    }
    if (this.shardList === undefined) this.scheduleRebalance();
  }

  private listShards(): Promise<ShardNode[]> {
    this.io.listShards += 1;
    return listShards(this.deps.kinesis, this.stream);
  }

  private drain(shard: OwnedShard): void {
    shard.phase = { kind: 'draining' };
    shard.endedAt = this.deps.scheduler.now();
    this.shardList = undefined;
  }

  /** Hand a shard over: stop reading, wait a bounded time for in-flight acks, checkpoint, release. */
  private beginRelease(shard: OwnedShard, reason: string): void {
    if (shard.phase.kind === 'reading') void shard.phase.reader.stop();
    shard.dropBuffer();
    shard.dropRetries();
    shard.phase = { kind: 'releasing', deadline: this.deps.scheduler.now() + this.deps.config.handoffTimeoutMs, reason };
    this.log(LogLevel.Info, `handing ${shard.shardId} over (${reason}); waiting up to ${this.deps.config.handoffTimeoutMs} ms for ${shard.inFlight.size} in-flight record(s)`);
  }

  /** Moves shards whose wait is over: drained ones to SHARD_END, released ones to their last checkpoint. */
  private maintain(): void {
    const session = this.session;
    if (!session) return;
    const now = this.deps.scheduler.now();
    for (const shard of this.shards.values()) {
      if (this.deps.config.ordering === 'parents-emitted' && shard.phase.kind === 'draining' && shard.buffered === 0 && !shard.endAnnounced) {
        shard.endAnnounced = true;
        session.store.markEnded(shard.shardId).catch((err) => {
          shard.endAnnounced = false;
          this.log(LogLevel.Warn, `could not mark ${shard.shardId} as fully emitted: ${describeError(err)}`);
        });
      }
      if (shard.drained) {
        shard.phase = { kind: 'closing' };
        void this.finish(session, shard);
      } else if (shard.phase.kind === 'releasing' && (shard.handedOver || now >= shard.phase.deadline)) {
        shard.phase = { kind: 'closing' };
        void this.release(session, shard);
      }
    }
  }

  private async finish(session: SessionState, shard: OwnedShard): Promise<void> {
    try {
      await this.waitForFlush(shard.shardId);
      const done = shard.stored !== undefined && (await session.store.finishShard(shard.shardId, shard.stored.version, shard.lastSequenceNumber));
      this.io.checkpointWrites += 1;
      if (this.session !== session) return;
      this.shards.delete(shard.shardId);
      if (done) {
        const waited = shard.endedAt === undefined ? '' : ` ${Math.round(this.deps.scheduler.now() - shard.endedAt)} ms after its end was reached`;
        this.log(LogLevel.Info, `reshard: ${shard.shardId} finished: SHARD_END written${waited}, lease released; its children may be read`);
      } else {
        this.log(LogLevel.Warn, `${shard.shardId}: SHARD_END not written (checkpoint changed under us); releasing the lease, the next holder finishes it`);
        await session.store.releaseLease(shard.shardId);
      }
      this.scheduleRebalance();
    } catch (err) {
      this.log(LogLevel.Warn, `finishing ${shard.shardId} failed: ${describeError(err)}; retrying`);
      if (this.shards.get(shard.shardId) === shard) shard.phase = { kind: 'draining' };
    }
  }

  private async release(session: SessionState, shard: OwnedShard): Promise<void> {
    try {
      await this.writeCheckpoint(session, shard);
      await session.store.releaseLease(shard.shardId);
      const held = Math.round(this.deps.scheduler.now() - shard.acquiredAt);
      this.log(LogLevel.Info, `${shard.shardId} released at ${shard.stored ? describePosition(shard.stored.position) : 'its start'} after holding it ${held} ms; ${shard.inFlight.size} record(s) left in flight`);
    } catch (err) {
      this.log(LogLevel.Warn, `releasing ${shard.shardId} failed: ${describeError(err)}; dropping it (the lease goes with our session if it is gone)`);
    } finally {
      if (this.shards.get(shard.shardId) === shard) this.shards.delete(shard.shardId);
      this.scheduleRebalance();
    }
  }

  private async waitForFlush(shardId: string): Promise<void> {
    while (this.flushing.has(shardId)) await this.deps.scheduler.sleep(5);
  }

  /** Writes every changed checkpoint; a failed write is retried at the next flush. */
  async flushCheckpoints(): Promise<void> {
    const session = this.session;
    if (!session) return;
    await Promise.all([...this.shards.values()].map((shard) => this.writeCheckpoint(session, shard).catch((err) => this.log(LogLevel.Warn, `checkpoint of ${shard.shardId} not written: ${describeError(err)}`))));
  }

  private async writeCheckpoint(session: SessionState, shard: OwnedShard): Promise<void> {
    const next = shard.committable();
    if (!next || !shard.stored || this.flushing.has(shard.shardId)) return;
    const stored = shard.stored;
    if (stored.position.kind === 'AFTER' && next.kind === 'AFTER' && stored.position.sequenceNumber === next.sequenceNumber) return;
    this.flushing.add(shard.shardId);
    try {
      let result = await session.store.writeCheckpoint(shard.shardId, next, stored.version);
      if (result === 'conflict') {
        // After a lost connection the outcome of the last write is unknown: re-read, never move backwards.
        const current = await session.store.readCheckpoint(shard.shardId);
        if (!current) throw new SpoutError(ErrorCode.ZooKeeper, `checkpoint node of ${shard.shardId} disappeared`);
        result = isNotBehind(current.position, next) ? current : await session.store.writeCheckpoint(shard.shardId, next, current.version);
        if (result === 'conflict') throw new SpoutError(ErrorCode.ZooKeeper, `checkpoint of ${shard.shardId} keeps changing under us`, { retriable: true });
      }
      shard.stored = result;
      this.io.checkpointWrites += 1;
    } finally {
      this.flushing.delete(shard.shardId);
    }
  }

  /** Flushes checkpoints, gives up leases and membership, closes the session. Bounded by `timeoutMs`. */
  async shutdown(timeoutMs: number): Promise<void> {
    this.stopped = true;
    for (const cancel of this.timers.splice(0)) cancel();
    const session = this.session;
    const work = (async () => {
      const held = [...this.shards.values()];
      await Promise.all(held.map((s) => (s.phase.kind === 'reading' ? s.phase.reader.stop() : undefined)));
      if (!session) return;
      await this.flushCheckpoints();
      await Promise.all(held.map((s) => session.store.releaseLease(s.shardId).catch(() => undefined)));
      await session.store.leaveMembers().catch(() => undefined);
    })();
    let cancel: (() => void) | undefined;
    const expired = new Promise<void>((resolve) => (cancel = this.deps.scheduler.after(timeoutMs, resolve)));
    await Promise.race([work.catch((err) => this.log(LogLevel.Warn, `shutdown: ${describeError(err)}`)), expired]);
    cancel?.();
    session?.zk.close();
    this.shards.clear();
  }
}
