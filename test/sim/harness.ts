/**
 * One simulated run from one seed: 2–4 spout processes (the real Coordinator and KinesisSpout each) on one
 * virtual clock, against the in-memory ZooKeeper and Kinesis, driven as Storm's ShellSpout drives them
 * (`next` every few ms while active; acks and fails after a delay). A chaos phase puts records, reshards,
 * kills, pauses, stops and restarts processes, deactivates the topology, and lets the fault plan break
 * requests; then a quiet phase without faults in which everything must converge. Invariants are checked
 * after every step; the first violation ends the run.
 */
import type { SpoutConfig } from '../../src/config/config';
import { describeError } from '../../src/errors';
import { drawRates, FaultPlan, type FaultRates } from './faults';
import { HandOvers, type HandOverStats } from './handOvers';
import { InvariantChecker, unitRank, type Violation } from './invariants';
import { SimKinesis } from './kinesis/simKinesis';
import { MAX_EVENT_RECORDS } from './kinesis/simFanOut';
import { SimStream } from './kinesis/simStream';
import { Operator } from './operator';
import { Random } from './random';
import { BASE, configSummary, drawConfig, STREAM, WALL_BASE_MS, type SimReadMode } from './simConfig';
import { BLUE, GREEN, launchProcess, type ProcessWorld, type SpoutProcess } from './spoutProcess';
import { describeState } from './stateReport';
import { Trace } from './trace';
import { Owner, SimLoop } from './virtualTime';
import { kplAggregate } from '../helpers/kpl';
import { ZkServer } from './zooKeeper/zkServer';

/** The most user records the simulated producers put in one KPL aggregate. */
const MAX_USER_RECORDS = 4;

export interface SimOptions {
  seed: number;
  /** Trace lines kept for a failure report (Infinity when replaying). */
  keepTrace?: number;
  /** Prints trace lines as they happen (replay). */
  echo?: (line: string) => void;
  /** Virtual ms of chaos, then at most this much quiet to converge. */
  chaosMs?: number;
  quietMs?: number;
  /**
   * 'chaos': crashes, pauses and ZooKeeper faults; 'planned': only planned hand-overs (joins, reshards),
   * tuple failures, Kinesis errors and a slow ZooKeeper, so no record may be emitted twice once acked.
   * Default: drawn from the seed (one in four planned).
   */
  mode?: 'chaos' | 'planned';
  /**
   * Every task's `balance` (default: the configuration's, count). With "throughput" leases move by load
   * after the start grace, by design: `start-handover` is not checked.
   */
  balance?: 'count' | 'throughput';
  /** Faults this run never injects (to tell one defect from another). */
  without?: readonly (keyof FaultRates)[];
  /** Invariants traced but not failed on (to look past a known defect). */
  ignore?: readonly string[];
  /** How the spouts read: GetRecords or enhanced fan-out. Default: drawn from the seed (one in two). */
  readMode?: SimReadMode;
  /** `at-most-once`: every spout so, with tuple tracking (the checker then checks `twice` and `uncovered`). */
  delivery?: 'at-least-once' | 'at-most-once';
  /** Every task's `maxCheckpointWritesPerSecond` (default: the configuration's, 1,000: never reached here). */
  checkpointCap?: number;
  /**
   * A new version deployed as another topology beside the running one, in planned runs (default: drawn, in
   * four planned runs of ten; 'none': never): see `deployVersion`.
   */
  versions?: VersionDeploy | 'none';
}

/**
 * How the new version (GREEN) replaces the running one (BLUE): submit green, then `storm kill blue` (a
 * deactivate, the kill's wait, SIGTERM); the kill first, green submitted during its wait; or as the first,
 * with blue reactivated during the wait (`storm activate blue`) before it is deactivated again and killed.
 */
export type VersionDeploy = 'green-then-kill' | 'kill-then-green' | 'reactivate';
export const VERSION_DEPLOYS: readonly VersionDeploy[] = ['green-then-kill', 'kill-then-green', 'reactivate'];

export interface SimResult {
  seed: number;
  violation: Violation | undefined;
  trace: string[];
  stats: {
    virtualMs: number;
    steps: number;
    records: number;
    shards: number;
    instances: number;
    emits: number;
    restarts: number;
    convergedAt: number | undefined;
    handOvers: HandOverStats;
    /** Checkpoint writes the cap deferred, by the processes alive at the end (`maxCheckpointWritesPerSecond`). */
    checkpointWritesDeferred: number;
  };
  rates: FaultRates;
}

/** How soon unexpected data a process read must reach Storm as an `error`. */
const REPORT_WITHIN_MS = 3_000;

export class Simulation {
  private readonly loop = new SimLoop();
  private readonly trace: Trace;
  private readonly rng: Random;
  private readonly world = new Owner('world');
  private readonly processWorld: ProcessWorld;
  private readonly plan: FaultPlan;
  private readonly server: ZkServer;
  private readonly stream: SimStream;
  private readonly kinesis: SimKinesis;
  private readonly checker: InvariantChecker;
  private readonly config: SpoutConfig;
  private readonly slots: (SpoutProcess | undefined)[];
  private readonly planned = new Map<string, number>();
  /**
   * Per lease tenure (the lease node as created: a new take is a new node), the emissions still awaiting
   * Storm's ack or fail. A record emitted again within one tenure while Storm still owes an outcome for it
   * is an outcome taken for the wrong emission (a late fail of an emission before the shard was let go).
   */
  private readonly outstanding = new WeakMap<object, Map<string, number>>();
  private readonly mode: 'chaos' | 'planned';
  /**
   * Planned runs only: every task starts at once, as a deploy starts them (else they join far apart, the
   * first taking every shard it may and handing them over as the others join).
   */
  private readonly deploy: boolean;
  private readonly handOvers: HandOvers;
  /** Which topologies Storm has active (BLUE from the start; GREEN once a new version is submitted). */
  private readonly active = new Map<string, boolean>([[BLUE, true]]);
  /** How this run deploys a new version, if it does. */
  private readonly versions: VersionDeploy | undefined;
  /** Slots whose topology was killed: never restarted. */
  private readonly retired = new Set<number>();
  /** From when a BLUE session taking a lease while GREEN reads is a steal (blue gave way for good). */
  private blueGaveWayAt: number | undefined;
  private quiet = false;
  private incarnations = 0;
  private restarts = 0;
  private emits = 0;
  private convergedAt: number | undefined;
  private readonly operator: Operator;
  /** What processes reported to Storm with `error`. */
  private readonly errors: { at: number; who: string; message: string }[] = [];

  constructor(private readonly options: SimOptions) {
    const { seed } = options;
    this.rng = new Random(seed, 'workload');
    this.trace = new Trace(() => this.loop.now, options.keepTrace ?? 200, options.echo);
    this.mode = options.mode ?? (new Random(seed, 'mode').chance(0.25) ? 'planned' : 'chaos');
    const rates = drawRates(new Random(seed, 'rates'));
    const off: (keyof FaultRates)[] =
      this.mode === 'planned'
        ? ['zkDropBefore', 'zkDropAfter', 'zkBlackhole', 'zkStaleRead', 'zkConnectFails', 'kinesisNotFound']
        : [];
    for (const fault of [...off, ...(options.without ?? [])]) rates[fault] = 0;
    this.plan = new FaultPlan(new Random(seed, 'faults'), rates);
    this.server = new ZkServer(this.loop, new Owner('zk'), (what) => this.trace.add('zk', what));
    this.stream = new SimStream(
      STREAM,
      WALL_BASE_MS - 86_400_000,
      this.rng.int(1, 4),
      () => WALL_BASE_MS + this.loop.now,
    );
    this.kinesis = new SimKinesis(
      this.loop,
      this.stream,
      this.plan,
      new Random(seed, 'kinesis-shape'),
      (who, what) => this.trace.add(who, what),
      new Random(seed, 'fan-out'),
    );
    // Mostly TRIM_HORIZON (every record must be read); some runs LATEST (from the first start on, AT_TIMESTAMP).
    const drawn = drawConfig(
      this.rng,
      this.mode === 'planned',
      new Random(seed, 'initial').chance(0.3) ? 'LATEST' : 'TRIM_HORIZON',
      options.readMode ?? (new Random(seed, 'read-mode').chance(0.5) ? 'fanOut' : 'polling'),
    );
    this.config = {
      ...drawn,
      ...(options.balance ? { balance: options.balance } : {}),
      ...(options.checkpointCap ? { maxCheckpointWritesPerSecond: options.checkpointCap } : {}),
      // Tracked, so that the harness sees ids; `retry` (drawn) goes unused, as the configuration would refuse it.
      ...(options.delivery === 'at-most-once' ? { delivery: 'at-most-once', tupleTracking: true } : {}),
    };
    this.checker = new InvariantChecker(
      this.server,
      this.stream,
      BASE,
      () => this.loop.now,
      (what) => this.trace.add('check', what),
    );
    const leases = `${BASE}/leases/`;
    this.server.observers.push((change) => {
      if (!change.path.startsWith(leases) || (change.before && change.after)) return;
      const shardId = change.path.slice(leases.length);
      const owner = change.before?.ephemeralOwner;
      const holder = this.slots.find((i) => owner !== undefined && i?.sessions.has(owner));
      if (!change.before && change.after) this.checkSteal(shardId, change.after.ephemeralOwner);
      const finished = this.server.node(`${BASE}/checkpoints/${shardId}`)?.data.toString('utf8').includes('SHARD_END');
      this.handOvers.onLeaseChange(change, shardId, finished === true, holder?.name);
      for (const instance of this.slots) instance?.held.forget(shardId);
    });
    this.server.observers.push((change) => {
      if (change.path.startsWith(`${BASE}/members/`) && !change.before && change.after) this.memberJoined();
    });
    this.operator = new Operator(
      this.server,
      BASE,
      (what) => this.log('operator', what),
      () => this.loop.now,
    );
    this.checker.outsiders.add(this.operator.sessionId);
    this.checker.forbidDuplicates = this.mode === 'planned';
    this.checker.atMostOnce = options.delivery === 'at-most-once';
    this.checker.ignored = new Set([
      ...(options.ignore ?? []),
      ...(options.balance === 'throughput' ? ['start-handover'] : []),
    ]);
    this.slots = new Array<SpoutProcess | undefined>(this.rng.int(2, 4)).fill(undefined);
    this.deploy = this.mode === 'planned' && new Random(seed, 'start').chance(0.7);
    const versions = new Random(seed, 'versions');
    this.versions =
      options.versions === 'none' || this.mode !== 'planned'
        ? undefined
        : (options.versions ?? (versions.chance(0.4) ? versions.pick(VERSION_DEPLOYS) : undefined));
    this.handOvers = new HandOvers(
      this.checker,
      this.config.handoffTimeoutMs,
      (ms, run) => this.loop.after(this.world, ms, run),
      (what) => this.trace.add('check', what),
      this.mode === 'planned',
    );
    this.processWorld = {
      seed,
      taskCount: this.slots.length,
      loop: this.loop,
      config: this.config,
      server: this.server,
      kinesis: this.kinesis,
      plan: this.plan,
      hooks: (name) => ({
        trace: (what) => this.log(name, what),
        watchers: (path, pending) => this.checker.checkWatchers(name, path, pending),
      }),
      logger: (name) => ({
        log: (level, message) => {
          const instance = this.slots.find((i) => i?.name === name);
          if (instance) this.handOvers.onLog(instance, message);
          this.log(name, `log${level} ${message}`);
        },
        error: (message) => {
          this.errors.push({ at: this.loop.now, who: name, message });
          this.log(name, `ERROR ${message}`);
        },
      }),
    };
  }

  private log(who: string, what: string, traffic = false): void {
    this.trace.add(who, what, traffic);
  }

  async run(): Promise<SimResult> {
    const chaosMs = this.options.chaosMs ?? 15_000;
    const quietMs = this.options.quietMs ?? 40_000;
    this.log(
      'sim',
      `seed ${this.options.seed} (${this.mode}): ${this.slots.length} instances, ${this.stream.shards.size} shard(s), config ${JSON.stringify(configSummary(this.config))}`,
    );
    if (this.versions) this.log('sim', `a new version is deployed beside the running one: ${this.versions}`);
    this.log(
      'sim',
      `fault rates ${JSON.stringify(this.plan.drawn, (_, v: unknown) => (typeof v === 'number' ? Math.round(v * 10_000) / 10_000 : v))}`,
    );
    const unhandled = (reason: unknown) => this.log('node', `unhandled rejection: ${describeError(reason)}`);
    process.on('unhandledRejection', unhandled);
    try {
      // A deploy starts every task within a fraction of the session timeout, and no reshard comes before
      // their start grace is over: no lease may move until then. Other planned runs start tasks far apart.
      const timeout = this.config.zookeeper.sessionTimeoutMs;
      const spread = this.deploy ? Math.floor(timeout / 4) : this.mode === 'planned' ? 4_000 : 300;
      // In half the deploys the last task starts late (a slow supervisor): the others hand it its share.
      const late = this.deploy && this.rng.chance(0.5) ? this.slots.length - 1 : -1;
      for (let slot = 0; slot < this.slots.length; slot += 1)
        this.loop.after(this.world, slot === late ? this.rng.int(5_000, 10_000) : this.rng.int(0, spread), () =>
          this.startInstance(slot),
        );
      this.handOvers.startWindowOpen = this.deploy;
      this.produce(chaosMs);
      this.scheduleChaos(chaosMs, this.deploy ? spread + timeout + this.rng.int(200, 1_500) : this.rng.int(200, 1_500));
      if (this.versions) this.deployVersion(this.versions, spread + timeout + this.rng.int(500, 2_000));
      // Some runs get unexpected data written into ZooKeeper early on (it is put right when the faults stop).
      if (this.mode === 'chaos' && this.rng.chance(0.25))
        this.loop.after(this.world, this.rng.int(500, chaosMs / 2), () =>
          this.operator.corrupt(this.stream, this.rng, this.loop.now),
        );
      this.loop.after(this.world, chaosMs, () => this.beginQuiet());
      const crashed = (err: unknown, owner: Owner) =>
        this.checker.fail('crash', `a timer of ${owner.name} threw: ${describeError(err)}`);
      let checks = 0;
      await this.loop.run(
        chaosMs + quietMs,
        () => this.afterStep(),
        () => {
          if (this.checker.violation) return true;
          if (!this.quiet || (checks += 1) % 50 !== 0) return false;
          if (this.checker.notConverged() !== undefined) return false;
          this.convergedAt = this.loop.now;
          return true;
        },
        crashed,
      );
      if (!this.checker.violation && this.convergedAt === undefined) {
        const state = describeState(this.stream, this.server, this.slots);
        for (const line of state) this.log('state', line);
        const orphaned = state.find((line) => line.includes('does NOT hold it'));
        const hint = orphaned ? `; orphaned lease: ${orphaned}` : '';
        this.checker.fail(
          'converged',
          `not converged ${quietMs} ms after faults stopped: ${this.checker.notConverged()}${hint}`,
        );
      }
      if (this.convergedAt !== undefined)
        this.log('sim', `converged ${this.convergedAt - chaosMs} ms after faults stopped`);
    } finally {
      process.off('unhandledRejection', unhandled);
      for (const instance of this.slots) if (instance) instance.owner.state = { kind: 'dead' };
    }
    return {
      seed: this.options.seed,
      violation: this.checker.violation,
      trace: this.trace.tail(this.options.keepTrace ?? 200),
      stats: {
        virtualMs: this.loop.now,
        steps: this.loop.steps,
        records: this.stream.recordCount,
        shards: this.stream.shards.size,
        instances: this.slots.length,
        emits: this.emits,
        restarts: this.restarts,
        convergedAt: this.convergedAt,
        handOvers: this.handOvers.stats,
        checkpointWritesDeferred: this.slots.reduce(
          (sum, instance) => sum + (instance?.coordinator.io.checkpointWritesDeferred ?? 0),
          0,
        ),
      },
      rates: this.plan.drawn,
    };
  }

  private afterStep(): void {
    for (const instance of this.slots) {
      if (instance?.owner.alive)
        this.checker.checkMemory(
          instance.name,
          instance.coordinator.inMemory(),
          this.memoryCap(instance.coordinator.shards.size),
        );
    }
  }

  /**
   * What a process holding `shards` may hold at most. Polling: one GetRecords on top of the cap (the readers
   * reserve what they ask for). Fan-out: an event's size is the server's choice, so each shard may go past
   * its share by the one event it had asked for while it had room (documented). And a Kinesis record may be
   * an aggregate: the room is reckoned at the shard's mean user records per record, so aggregates larger
   * than that mean go past it (documented); at most MAX_USER_RECORDS user records per Kinesis record here.
   */
  private memoryCap(shards: number): number {
    const beyond =
      this.config.readMode === 'fanOut' ? Math.max(1, shards) * MAX_EVENT_RECORDS : this.config.maxRecordsPerRequest;
    return this.config.maxRecordsInMemory + beyond * MAX_USER_RECORDS;
  }

  // ---- processes

  private startInstance(slot: number): void {
    if (this.slots[slot]?.owner.alive || this.retired.has(slot)) return;
    const topology = this.greenSlots.includes(slot) ? GREEN : BLUE;
    const taskCount = topology === GREEN ? this.greenSlots.length : this.processWorld.taskCount;
    const instance = launchProcess(this.processWorld, slot, (this.incarnations += 1), topology, taskCount);
    this.slots[slot] = instance;
    this.log(instance.name, 'started');
    this.command(instance, 'start', () => {
      instance.coordinator.start();
      if (!this.isActive(topology)) instance.coordinator.deactivate();
    });
    this.driveNext(instance);
  }

  /** A Storm command: what it throws is a bug (the process reports it and goes on; nothing should throw). */
  private command(instance: SpoutProcess, what: string, run: () => void): void {
    try {
      run();
    } catch (err) {
      this.checker.fail('crash', `${instance.name} ${what} threw: ${describeError(err)}`);
    }
  }

  /** ShellSpout calls `next` in a loop, sleeping a little when nothing came out. */
  private driveNext(instance: SpoutProcess): void {
    let idle = 0;
    const tick = () => {
      if (!instance.owner.alive || instance.stopping) return;
      let emitted = 0;
      if (this.isActive(instance.topology)) {
        this.command(instance, 'next', () =>
          instance.spout.next({
            emit: (id) => {
              emitted += 1;
              this.onEmit(instance, id!);
            },
          }),
        );
      }
      idle = emitted > 0 ? 0 : Math.min(idle + 1, 5);
      this.loop.after(instance.owner, emitted > 0 ? 2 : 5 * idle, tick);
    };
    this.loop.after(instance.owner, 1, tick);
  }

  private onEmit(instance: SpoutProcess, id: string): void {
    this.emits += 1;
    const [shardId, sequenceNumber, subText] = id.split(':');
    const sub = subText === undefined ? undefined : Number(subText);
    this.log(instance.name, `emit ${id}`, true);
    this.checker.onEmit(instance.name, instance.sessions, shardId, sequenceNumber, sub);
    instance.held.emitted(shardId, id, unitRank(sequenceNumber, sub));
    const leases = `${BASE}/leases/`;
    const holds = (shard: string) => {
      const owner = this.server.node(leases + shard)?.ephemeralOwner;
      return owner !== undefined && instance.sessions.has(owner) && this.server.isAlive(owner);
    };
    const cap = this.memoryCap(instance.coordinator.shards.size);
    const held = instance.held.count(holds);
    if (held > cap)
      this.checker.fail(
        'memory',
        `${instance.name} holds at least ${held} records (emitted, from its oldest unacked one on), over the cap of ${cap}`,
      );
    const tenure = this.server.node(leases + shardId);
    const owed = tenure && (this.outstanding.get(tenure) ?? new Map<string, number>());
    if (tenure && owed) {
      this.outstanding.set(tenure, owed);
      if ((owed.get(id) ?? 0) > 0)
        this.checker.fail(
          'double-emission',
          `${instance.name} emitted ${id} again while Storm still owes the outcome of its emission under the same lease`,
        );
      owed.set(id, (owed.get(id) ?? 0) + 1);
    }
    // Some tuples fail, a few several times (the same record keeps its planned failures across processes).
    if (!this.planned.has(id)) {
      // A poison record fails until the faults stop: everything read behind it waits in memory.
      const poison = this.mode === 'chaos' && this.rng.chance(0.002);
      const many = this.mode === 'chaos' && this.rng.chance(0.005);
      this.planned.set(
        id,
        poison ? Infinity : many ? this.rng.int(3, 6) : this.rng.chance(0.04) ? this.rng.int(1, 2) : 0,
      );
      if (poison) this.log(instance.name, `${id} is a poison record: it fails until the faults stop`);
    }
    // A tuple lost in the topology is failed by Storm's message timeout, long after (scaled down here).
    const timesOut = this.mode === 'chaos' && this.rng.chance(0.01);
    const delay = timesOut
      ? this.rng.int(2_000, 6_000)
      : this.rng.chance(0.9)
        ? this.rng.int(1, 60)
        : this.rng.int(60, 1_500);
    this.loop.after(instance.owner, delay, () => {
      owed?.set(id, (owed.get(id) ?? 1) - 1);
      if (instance.stopping) return;
      const failures = this.planned.get(id) ?? 0;
      if ((failures > 0 || timesOut) && !this.quiet) {
        if (!timesOut) this.planned.set(id, failures - 1);
        this.log(instance.name, timesOut ? `fail ${id} (message timeout)` : `fail ${id}`, true);
        // At most once, a fail releases the tuple: it is not held for a re-emit.
        if (this.checker.atMostOnce) instance.held.acked(shardId, id);
        this.command(instance, 'fail', () =>
          instance.spout.fail(id, {
            emitUnanchored: () => this.checker.fail('crash', `${instance.name} gave up ${id}, with unlimited retries`),
          }),
        );
      } else {
        this.log(instance.name, `ack ${id}`, true);
        this.checker.onAck(id);
        instance.held.acked(shardId, id);
        this.command(instance, 'ack', () => instance.spout.ack(id));
      }
    });
  }

  private kill(instance: SpoutProcess): void {
    this.log(instance.name, 'KILLED (its session is abandoned and expires on the server)');
    instance.owner.state = { kind: 'dead' };
    this.restartLater(instance.slot);
  }

  private shutdown(instance: SpoutProcess): void {
    this.log(instance.name, 'clean shutdown (SIGTERM)');
    instance.stopping = true;
    const finished = instance.coordinator.shutdown(5_000);
    void finished.then(() => {
      this.log(instance.name, 'exited');
      instance.owner.state = { kind: 'dead' };
      this.restartLater(instance.slot);
    });
  }

  private restartLater(slot: number): void {
    this.restarts += 1;
    this.loop.after(this.world, this.quiet ? 10 : this.rng.int(200, 5_000), () => this.startInstance(slot));
  }

  private pause(instance: SpoutProcess, ms: number): void {
    this.log(instance.name, `PAUSED for ${ms} ms (SIGSTOP)`);
    instance.owner.state = { kind: 'paused', until: this.loop.now + ms };
    this.loop.after(this.world, ms, () => {
      if (instance.owner.state.kind === 'paused') instance.owner.state = { kind: 'running' };
      this.log(instance.name, 'resumed (SIGCONT)');
    });
  }

  private isActive(topology: string): boolean {
    return this.active.get(topology) === true;
  }

  private setActive(active: boolean, topology = BLUE): void {
    this.active.set(topology, active);
    this.log('storm', `${active ? 'activate' : 'deactivate'} ${topology} (topology-wide)`);
    for (const instance of this.slots) {
      if (!instance?.owner.alive || instance.stopping || instance.topology !== topology) continue;
      instance.lastToggleAt = Math.max(instance.lastToggleAt, this.loop.now + this.rng.int(0, 20));
      this.loop.at(instance.owner, instance.lastToggleAt, () => {
        if (!instance.stopping)
          this.command(instance, active ? 'activate' : 'deactivate', () =>
            active ? instance.coordinator.activate() : instance.coordinator.deactivate(),
          );
      });
    }
  }

  // ---- a new version beside the running one

  /** GREEN's slots (after BLUE's), once submitted. */
  private readonly greenSlots: number[] = [];

  /**
   * Deploys GREEN beside BLUE from `at` on, as `how` says, with Storm's own commands: submit (its tasks start
   * within a second), `storm kill` (a deactivate, the kill's wait, then SIGTERM to every task: clean
   * shutdowns), `storm activate`. The wait is the hand-over timeout and a few seconds (Storm's default is the
   * message timeout, 30 s, far above the 5 s default hand-over timeout). Checked: BLUE holds no lease a few
   * seconds after it is deactivated beside a reading GREEN (`deploy-held`), and takes none back while GREEN
   * reads (`deploy-steal`); with `duplicate` (planned runs), `converged` and the rest as in every run.
   */
  private deployVersion(how: VersionDeploy, at: number): void {
    const handoff = this.config.handoffTimeoutMs;
    const wait = handoff + this.rng.int(4_500, 6_000);
    const greens = this.rng.int(1, 3);
    const submit = () => {
      this.active.set(GREEN, true);
      this.log('storm', `submit ${GREEN} (${greens} task(s))`);
      for (let i = 0; i < greens; i += 1) {
        const slot = this.slots.length;
        this.slots.push(undefined);
        this.greenSlots.push(slot);
        this.loop.after(this.world, this.rng.int(0, 1_000), () => this.startInstance(slot));
      }
    };
    const kill = () => {
      this.setActive(false, BLUE);
      this.log('storm', `kill ${BLUE} -w ${wait} ms`);
      this.loop.after(this.world, wait, () => {
        this.log('storm', `${BLUE}'s wait is over: its workers are stopped`);
        for (let slot = 0; slot < this.processWorld.taskCount; slot += 1) {
          this.retired.add(slot);
          const instance = this.slots[slot];
          if (instance?.owner.alive && !instance.stopping) this.shutdown(instance);
        }
      });
    };
    /** BLUE's leases are all handed over `handoff` + 3 s after GREEN reads beside a deactivated BLUE. */
    const checkHeld = (from: number) => {
      this.blueGaveWayAt ??= from + handoff;
      this.loop.after(this.world, from - this.loop.now + handoff + 3_000, () => this.checkBlueHoldsNothing());
    };
    const gap = this.rng.int(0, 1_000);
    if (how === 'kill-then-green') {
      this.loop.after(this.world, at, kill);
      this.loop.after(this.world, at + gap, () => {
        submit();
        checkHeld(this.loop.now + 1_000);
      });
      return;
    }
    this.loop.after(this.world, at, submit);
    this.loop.after(this.world, at + 1_000 + gap, () => {
      if (how === 'green-then-kill') {
        kill();
        checkHeld(this.loop.now);
        return;
      }
      // `storm deactivate blue`, later `storm activate blue` (it must take nothing back), then the kill.
      this.setActive(false, BLUE);
      checkHeld(this.loop.now);
      this.loop.after(this.world, handoff + 3_500, () => {
        this.setActive(true, BLUE);
        this.loop.after(this.world, this.rng.int(500, 2_000), kill);
      });
    });
  }

  private checkBlueHoldsNothing(): void {
    const leases = `${BASE}/leases/`;
    for (const instance of this.slots) {
      if (instance?.topology !== BLUE || !instance.owner.alive) continue;
      for (const shardId of this.stream.shards.keys()) {
        const owner = this.server.node(leases + shardId)?.ephemeralOwner;
        if (owner !== undefined && instance.sessions.has(owner))
          this.checker.fail(
            'deploy-held',
            `${instance.name} (${BLUE}, deactivated beside ${GREEN}) still holds ${shardId} ${this.config.handoffTimeoutMs} ms + 3 s after it was to hand it over`,
          );
      }
    }
  }

  /** A lease taken by a BLUE session after BLUE gave way, while a GREEN task lives: a steal. */
  private checkSteal(shardId: string, session: string): void {
    if (this.blueGaveWayAt === undefined || this.loop.now < this.blueGaveWayAt) return;
    const taker = this.slots.find((i) => i?.sessions.has(session));
    const greenLives = this.slots.some((i) => i?.topology === GREEN && i.owner.alive && !i.stopping);
    if (taker?.topology === BLUE && greenLives)
      this.checker.fail(
        'deploy-steal',
        `${taker.name} (${BLUE}, which gave way) took ${shardId} while ${GREEN} reads: a reactivated old topology takes nothing back`,
      );
  }

  // ---- the world

  private produce(untilMs: number): void {
    const tick = () => {
      if (this.loop.now >= untilMs) return;
      for (let n = this.rng.int(0, 3); n > 0; n -= 1) {
        const key = `key-${this.rng.int(0, 99)}`;
        const n = this.stream.recordCount;
        // Some records are KPL aggregates (made by aws-kinesis-agg): one tuple per user record, checkpoints inside them.
        const users = this.rng.chance(0.15) ? this.rng.int(2, MAX_USER_RECORDS) : 0;
        const data =
          users === 0
            ? Buffer.from(`{"n":${n}}`)
            : kplAggregate(
                Array.from({ length: users }, (_, i) => ({
                  partitionKey: `${key}-${i}`,
                  data: `{"n":${n},"sub":${i}}`,
                })),
              ).data;
        const record = this.stream.put(key, this.rng.next(), data, users);
        this.log('kinesis', `put ${record.shardId}:${record.sequenceNumber}`, true);
      }
      this.loop.after(this.world, this.rng.int(20, 120), tick);
    };
    this.loop.after(this.world, 0, tick);
  }

  private scheduleChaos(untilMs: number, firstAt: number): void {
    const tick = () => {
      if (this.loop.now >= untilMs) return;
      this.chaosEvent();
      this.loop.after(this.world, this.rng.int(200, 1_500), tick);
    };
    this.loop.after(this.world, firstAt, tick);
  }

  private firstJoinAt: number | undefined;

  /** The start check holds only while every task joins within half a session timeout of the first. */
  private memberJoined(): void {
    this.firstJoinAt ??= this.loop.now;
    const late = this.loop.now - this.firstJoinAt > this.config.zookeeper.sessionTimeoutMs / 2;
    if (late && this.handOvers.startWindowOpen) {
      this.handOvers.startWindowOpen = false;
      this.log(
        'check',
        `a task joined ${this.loop.now - this.firstJoinAt} ms after the first: start hand-overs not checked`,
      );
    }
  }

  private reshardBegins(): void {
    this.handOvers.startWindowOpen = false;
  }

  private chaosEvent(): void {
    const r = this.rng.next();
    const live = this.slots.filter(
      (i): i is SpoutProcess => i !== undefined && i.owner.state.kind === 'running' && !i.stopping,
    );
    const someone = live.length > 0 ? this.rng.pick(live) : undefined;
    const timeout = this.config.zookeeper.sessionTimeoutMs;
    // Planned runs: only reshards (and tasks joining); nobody dies, pauses or stops, the topology stays active.
    if (this.mode === 'planned' && r >= 0.2) return;
    if (r < 0.12) {
      const open = this.stream.open();
      if (open.length < 6) {
        const parent = this.rng.pick(open);
        this.reshardBegins();
        const children = this.stream.split(parent, this.rng.next() * 0.4 - 0.2);
        this.log('kinesis', `SPLIT ${parent.shardId} into ${children.map((c) => c.shardId).join(', ')}`);
      }
    } else if (r < 0.2) {
      const pairs = this.stream.adjacentPairs();
      if (pairs.length > 0) {
        const [a, b] = this.rng.pick(pairs);
        this.reshardBegins();
        const child = this.stream.merge(a, b);
        this.log('kinesis', `MERGE ${a.shardId} and ${b.shardId} into ${child.shardId}`);
      }
    } else if (r < 0.32) {
      if (someone) this.kill(someone);
    } else if (r < 0.5) {
      if (someone)
        this.pause(someone, this.rng.chance(0.5) ? this.rng.int(50, timeout) : this.rng.int(timeout, timeout * 2.5));
    } else if (r < 0.6) {
      this.setActive(!this.isActive(BLUE));
    } else if (r < 0.7) {
      if (someone) this.shutdown(someone);
    }
    // Otherwise nothing: requests keep failing as the fault plan says.
  }

  private beginQuiet(): void {
    this.quiet = true;
    this.plan.calm();
    this.log('sim', 'QUIET: no more faults, no more records; every process back; everything must converge');
    for (const damage of this.operator.damage) {
      // A process that read the damaged node and is still alive has had a few seconds to say so.
      const read = damage.reads.find(
        (r) => this.loop.now - r.at >= REPORT_WITHIN_MS && this.server.isAlive(r.sessionId),
      );
      if (!read) continue;
      const reported = this.errors.some((e) => e.at >= damage.at && e.message.includes(damage.shardId));
      if (!reported)
        this.checker.fail(
          'silent',
          `${damage.path} (${damage.kind}) since ${damage.at} ms, read at ${read.at} ms by session ${read.sessionId}, still alive, and no process reported it to Storm with an error naming ${damage.shardId}`,
        );
    }
    this.operator.repair();
    if (!this.isActive(BLUE) && !this.versions) this.setActive(true);
    for (let slot = 0; slot < this.slots.length; slot += 1) {
      const instance = this.slots[slot];
      if (!instance?.owner.alive) this.loop.after(this.world, 10, () => this.startInstance(slot));
    }
  }
}

export async function simulate(options: SimOptions): Promise<SimResult> {
  return new Simulation(options).run();
}
