/**
 * The scale benchmark in the simulation (test/sim): the real Coordinator and KinesisSpout of T tasks on
 * the in-memory ZooKeeper and Kinesis, on a virtual clock, no faults, no shard limit; `next` driven as
 * ShellSpout drives it and every emit acked 1 ms later; one record put to every open shard every 0.5 s;
 * session timeout 6 s, other settings default; ListShards pages of up to 1,000 shards (as Kinesis's). The
 * same figures as bench/scale.ts, in virtual time: start -> every shard emitted and leases balanced; every
 * open shard split at once (a doubling, "ACTIVE" at that instant) and every pair of siblings merged back
 * (a halving), one record put to every new shard at that instant: each new shard's first emit; one task killed (its session abandoned, expiring on the
 * server): each of its shards' first emit elsewhere. Plus the ZooKeeper requests and Kinesis calls of each
 * phase, and the wall and CPU time the run cost here.
 */
import { loadConfig } from '../src/config/config';
import { FaultPlan, NO_FAULTS } from '../test/sim/faults';
import { SimKinesis } from '../test/sim/kinesis/simKinesis';
import { SimStream, type SimShard } from '../test/sim/kinesis/simStream';
import { Random } from '../test/sim/random';
import { APPLICATION, ROOT, STREAM, WALL_BASE_MS } from '../test/sim/simConfig';
import { launchProcess, type ProcessWorld, type SpoutProcess } from '../test/sim/spoutProcess';
import { Owner, SimLoop } from '../test/sim/virtualTime';
import type { Request } from '../test/sim/zooKeeper/zkServer';
import { ZkServer } from '../test/sim/zooKeeper/zkServer';
import type { KinesisApi } from '../src/kinesis/client';
import { summarize, type Summary } from './lib';
import { listingReplyBytes } from '../src/coordination/watchedFolder';
import type { ScaleSize } from './scale';

const SESSION_TIMEOUT_MS = 6_000;
const PUT_EVERY_MS = 500;

export interface SimPhase {
  /** Virtual ms from the event to every shard concerned emitted (undefined: not within the bound). */
  allMs: number | undefined;
  firstEmitMs: Summary;
  unread: number;
  /** ZooKeeper requests and Kinesis calls by every task from the event to the last first emit. */
  zkRequests: Record<string, number>;
  /** The same ZooKeeper requests by operation and folder (`getData leases`, `getChildren finished`, ...). */
  zkByFolder: Record<string, number>;
  /** Reads (getData, getChildren) among them, and the largest getChildren reply in bytes (as ZooKeeper encodes it). */
  zkReads: number;
  largestListingBytes: number;
  kinesisCalls: Record<string, number>;
}

export interface ScaleSimRun {
  shards: number;
  tasks: number;
  /** The simulation's seed (SCALE_SIM_SEED; absent in results from before it could be chosen: 1). */
  seed?: number;
  start: SimPhase & { balancedMs: number | undefined };
  double: SimPhase;
  halve: SimPhase;
  /** `sessionExpiredMs`: the kill -> the server expiring the victim's session (its last contact + the timeout). */
  kill: SimPhase & { orphans: number; sessionExpiredMs: number | undefined };
  records: { put: number; lost: number };
  /**
   * Invariants over the whole run: children whose first emit came before a parent's last emit (parents first),
   * and shards whose emitter switched back and forth within a second (two readers at once; a hand-over back and
   * forth takes longer).
   */
  violations: { parentsFirst: string[]; twoReaders: string[] };
  /**
   * A settled window (no reshard, no kill) of `windowSeconds` virtual seconds, with records arriving (busy) and
   * without (idle): ZooKeeper requests per second per task, reads and writes apart.
   */
  steady: { windowSeconds: number; busy: SteadyRates; idle: SteadyRates };
  /** The JavaScript heap of the whole simulation after the run, divided by the tasks (an upper bound per task). */
  heapPerTaskMiB: number;
  /** What the run cost on this machine. */
  wallSeconds: number;
  cpuSeconds: number;
  virtualSeconds: number;
}

export interface SteadyRates {
  readsPerTaskPerSecond: number;
  writesPerTaskPerSecond: number;
  byFolder: Record<string, number>;
}

const parentOf = (path: string) => path.slice(0, path.lastIndexOf('/'));
const READS = new Set(['getData', 'getChildren']);
const WRITES = new Set(['create', 'setData', 'remove', 'multi', 'mkdirp']);

class SimScale {
  readonly loop = new SimLoop();
  readonly world = new Owner('world');
  readonly server = new ZkServer(this.loop, new Owner('zk'), (what) => {
    if (/^session \S+ expired/.test(what)) this.expiries.push(this.loop.now);
  });
  /** When the server expired a session (virtual ms). */
  readonly expiries: number[] = [];
  producing = true;
  readonly stream: SimStream;
  readonly processes: SpoutProcess[] = [];
  /** Per shard, every emit: [virtual ms, slot]. */
  readonly emits = new Map<string, [number, number][]>();
  readonly acked = new Set<string>();
  put = 0;
  zk: Record<string, number> = {};
  zkByFolder: Record<string, number> = {};
  largestListingBytes = 0;
  kinesis: Record<string, number> = {};
  private sequence = 10n ** 50n;

  constructor(
    shards: number,
    readonly tasks: number,
    seed: number,
  ) {
    this.stream = new SimStream(STREAM, WALL_BASE_MS - 86_400_000, shards, () => WALL_BASE_MS + this.loop.now);
    const plan = new FaultPlan(new Random(seed, 'faults'), { ...NO_FAULTS });
    const simKinesis = new SimKinesis(this.loop, this.stream, plan, new Random(seed, 'shape'), () => undefined);
    simKinesis.maxPageSize = 1_000;
    const apply = this.server.apply.bind(this.server);
    this.server.apply = (sessionId: string, request: Request, readAt?: number) => {
      this.zk[request.op] = (this.zk[request.op] ?? 0) + 1;
      const folder = request.op === 'getChildren' ? request.path : 'path' in request ? parentOf(request.path) : '';
      const key = `${request.op} ${folder.split('/').pop()}`.trim();
      this.zkByFolder[key] = (this.zkByFolder[key] ?? 0) + 1;
      const reply = apply(sessionId, request, readAt);
      if (request.op === 'getChildren' && reply.ok && Array.isArray(reply.value))
        this.largestListingBytes = Math.max(this.largestListingBytes, listingReplyBytes(reply.value as string[]));
      return reply;
    };
    const counted = {
      clientFor: (owner: Owner): KinesisApi => {
        const inner = simKinesis.clientFor(owner);
        const send = (command: unknown, options?: unknown) => {
          const name = (command as object).constructor.name.replace(/Command$/, '');
          this.kinesis[name] = (this.kinesis[name] ?? 0) + 1;
          return (inner.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
        };
        return { send } as unknown as KinesisApi;
      },
    };
    const config = loadConfig({
      'kinesis.spout': {
        streamName: STREAM,
        region: 'us-east-1',
        applicationName: APPLICATION,
        initialPosition: 'TRIM_HORIZON',
        zookeeper: { connect: 'sim:2181', sessionTimeoutMs: SESSION_TIMEOUT_MS, root: ROOT },
      },
    });
    const world: ProcessWorld = {
      seed,
      loop: this.loop,
      config,
      taskCount: tasks,
      server: this.server,
      kinesis: counted as unknown as SimKinesis,
      plan,
      hooks: () => ({ trace: () => undefined, watchers: () => undefined }),
      logger: () => ({ log: () => undefined, error: () => undefined }),
    };
    for (let slot = 0; slot < tasks; slot += 1) {
      const p = launchProcess(world, slot, slot);
      this.processes.push(p);
      // A deploy: every task within 100 ms.
      this.loop.after(this.world, (slot * 37) % 100, () => {
        p.coordinator.start();
        this.driveNext(p);
      });
    }
    const produce = () => {
      if (this.producing) for (const shard of this.stream.open()) this.putTo(shard);
      this.loop.after(this.world, PUT_EVERY_MS, produce);
    };
    this.loop.after(this.world, 0, produce);
  }

  /**
   * One record to each of `shards` at once: new shards get their first record at the reshard's instant, so
   * that their first emit measures the taking and the first read, not where the reshard fell in the puts'
   * cadence (a new shard read before its first put waits an idle poll: the halving's 0.6 s or 1.8 s).
   */
  putNow(shards: readonly SimShard[]): void {
    for (const shard of shards) this.putTo(shard);
  }

  private putTo(shard: SimShard): void {
    this.sequence += 1_000n;
    shard.records.push({
      shardId: shard.shardId,
      sequenceNumber: this.sequence.toString(),
      partitionKey: shard.shardId,
      data: Buffer.from('x'),
      arrivalMs: this.stream.wallNow(),
      users: 0,
    });
    this.put += 1;
  }

  /** As ShellSpout: `next` in a loop, a pause when nothing came; each emit acked 1 ms later. */
  private driveNext(p: SpoutProcess): void {
    let idle = 0;
    const tick = () => {
      let emitted = 0;
      p.spout.next({
        emit: (id: string) => {
          emitted += 1;
          const shard = id.split(':')[0];
          const list = this.emits.get(shard) ?? [];
          list.push([this.loop.now, p.slot]);
          this.emits.set(shard, list);
          this.loop.after(p.owner, 1, () => {
            this.acked.add(id);
            p.spout.ack(id);
          });
        },
      } as never);
      idle = emitted > 0 ? 0 : Math.min(idle + 1, 5);
      this.loop.after(p.owner, emitted > 0 ? 2 : 5 * idle, tick);
    };
    this.loop.after(p.owner, 1, tick);
  }

  firstEmit(shard: string, since: number, notSlot?: number): number | undefined {
    for (const [at, slot] of this.emits.get(shard) ?? []) if (at >= since && slot !== notSlot) return at;
    return undefined;
  }

  lastEmitter(shard: string): number | undefined {
    const list = this.emits.get(shard);
    return list?.[list.length - 1]?.[1];
  }

  balanced(): boolean {
    const live = this.processes.filter((p) => p.owner.alive);
    const held = new Map(live.map((p) => [p.slot, 0]));
    const open = this.stream.open();
    for (const s of open) {
      const slot = this.lastEmitter(s.shardId);
      if (slot === undefined || !held.has(slot)) return false;
      held.set(slot, held.get(slot)! + 1);
    }
    const low = Math.floor(open.length / live.length);
    const high = Math.ceil(open.length / live.length);
    return [...held.values()].every((n) => n >= low && n <= high);
  }

  /** Runs until `done` (checked every 100 virtual ms) or `boundMs` more: the virtual time it took. */
  async runUntil(done: () => boolean, boundMs: number): Promise<number | undefined> {
    const start = this.loop.now;
    for (let t = start; t <= start + boundMs; t += 100) {
      await this.loop.run(t, () => undefined);
      if (done()) return this.loop.now - start;
    }
    return undefined;
  }

  /** Counting starts afresh. */
  resetCounts(): void {
    this.zk = {};
    this.zkByFolder = {};
    this.largestListingBytes = 0;
    this.kinesis = {};
  }

  /** ZooKeeper requests per second per live task over `seconds` virtual seconds of nothing happening. */
  async steadyWindow(seconds: number): Promise<SteadyRates> {
    this.resetCounts();
    await this.runUntil(() => false, seconds * 1_000);
    const live = this.processes.filter((p) => p.owner.alive).length;
    const rate = (ops: Set<string>) =>
      Math.round(
        (Object.entries(this.zk)
          .filter(([op]) => ops.has(op))
          .reduce((sum, [, n]) => sum + n, 0) /
          seconds /
          live) *
          100,
      ) / 100;
    return { readsPerTaskPerSecond: rate(READS), writesPerTaskPerSecond: rate(WRITES), byFolder: this.zkByFolder };
  }

  async phase(shards: string[], since: number, notSlot: number | undefined, boundMs: number): Promise<SimPhase> {
    this.resetCounts();
    const allMs = await this.runUntil(
      () => shards.every((s) => this.firstEmit(s, since, notSlot) !== undefined),
      boundMs,
    );
    const firsts = shards.map((s) => this.firstEmit(s, since, notSlot)).filter((t): t is number => t !== undefined);
    return {
      allMs,
      firstEmitMs: summarize(firsts.map((t) => t - since)),
      unread: shards.length - firsts.length,
      zkRequests: this.zk,
      zkByFolder: this.zkByFolder,
      zkReads: Object.entries(this.zk)
        .filter(([op]) => READS.has(op))
        .reduce((sum, [, n]) => sum + n, 0),
      largestListingBytes: this.largestListingBytes,
      kinesisCalls: this.kinesis,
    };
  }

  /** Children first emitted before a parent's last emit. */
  parentsFirstViolations(): string[] {
    const bad: string[] = [];
    for (const shard of this.stream.shards.values()) {
      const first = this.emits.get(shard.shardId)?.[0]?.[0];
      if (first === undefined) continue;
      for (const parent of shard.parents) {
        const last = this.emits.get(parent)?.at(-1)?.[0];
        if (last !== undefined && last > first) bad.push(`${shard.shardId} (parent ${parent})`);
      }
    }
    return bad;
  }

  /** Shards whose emitter went A -> B -> A -> B within one virtual second. */
  twoReaderViolations(): string[] {
    const bad: string[] = [];
    for (const [shardId, list] of this.emits) {
      const switches: number[] = [];
      for (let i = 1; i < list.length; i += 1) if (list[i]![1] !== list[i - 1]![1]) switches.push(list[i]![0]);
      for (let i = 2; i < switches.length; i += 1)
        if (switches[i]! - switches[i - 2]! < 1_000) {
          bad.push(shardId);
          break;
        }
    }
    return bad;
  }

  lost(): number {
    let lost = 0;
    for (const shard of this.stream.shards.values())
      for (const r of shard.records) if (!this.acked.has(`${r.shardId}:${r.sequenceNumber}`)) lost += 1;
    return lost;
  }
}

/** SCALE_SIM_SEED: the simulation's seed (its processes' jitter and Kinesis's latencies); 1 when unset. */
export function scaleSimSeed(text = process.env.SCALE_SIM_SEED): number {
  if (text === undefined || text === '') return 1;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`SCALE_SIM_SEED: ${text} is not a whole number >= 0`);
  return seed;
}

const openIds = (sim: SimScale) => sim.stream.open().map((s) => s.shardId);

export async function scaleSimRun(
  size: ScaleSize,
  log: (line: string) => void,
  seed = scaleSimSeed(),
): Promise<ScaleSimRun> {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const sim = new SimScale(size.shards, size.tasks, seed);
  const bound = 300_000;
  const startPhase = await sim.phase(openIds(sim), 0, undefined, bound);
  const balancedMs = await sim.runUntil(() => sim.balanced(), bound);
  const start = { ...startPhase, balancedMs: balancedMs === undefined ? undefined : sim.loop.now };
  await sim.runUntil(() => false, 3_000);
  const windowSeconds = 20;
  const busy = await sim.steadyWindow(windowSeconds);
  sim.producing = false;
  await sim.runUntil(() => sim.lost() === 0, 10_000);
  const idle = await sim.steadyWindow(windowSeconds);
  sim.producing = true;

  /** Shards created at this instant (each given a record now): each one's first emit, then the leases settled. */
  const reshard = async (created: SimShard[]): Promise<SimPhase> => {
    sim.putNow(created);
    const phase = await sim.phase(
      created.map((c) => c.shardId),
      sim.loop.now,
      undefined,
      bound,
    );
    await sim.runUntil(() => sim.balanced(), 60_000);
    await sim.runUntil(() => false, 2_000);
    return phase;
  };
  const double = await reshard(sim.stream.open().flatMap((s) => sim.stream.split(s, 0)));
  const sorted = sim.stream.open().sort((a, b) => (a.startingHashKey < b.startingHashKey ? -1 : 1));
  const merged: SimShard[] = [];
  for (let i = 0; i + 1 < sorted.length; i += 2) merged.push(sim.stream.merge(sorted[i], sorted[i + 1]));
  const halve = await reshard(merged);

  const victim = sim.processes[1];
  const orphans = openIds(sim).filter((s) => sim.lastEmitter(s) === victim.slot);
  victim.owner.state = { kind: 'dead' };
  const killAt = sim.loop.now;
  const killPhase = await sim.phase(orphans, killAt, victim.slot, bound);
  const expiry = sim.expiries.find((t) => t >= killAt);
  const kill = {
    ...killPhase,
    orphans: orphans.length,
    sessionExpiredMs: expiry === undefined ? undefined : expiry - killAt,
  };
  sim.producing = false;
  await sim.runUntil(() => sim.lost() === 0, 60_000);
  const used = process.cpuUsage(cpu);
  const run: ScaleSimRun = {
    shards: size.shards,
    tasks: size.tasks,
    seed,
    start,
    double,
    halve,
    kill,
    records: { put: sim.put, lost: sim.lost() },
    steady: { windowSeconds, busy, idle },
    violations: { parentsFirst: sim.parentsFirstViolations(), twoReaders: sim.twoReaderViolations() },
    heapPerTaskMiB: Math.round((process.memoryUsage().heapUsed / 2 ** 20 / size.tasks) * 10) / 10,
    wallSeconds: Math.round((performance.now() - wall) / 100) / 10,
    cpuSeconds: Math.round((used.user + used.system) / 1e5) / 10,
    virtualSeconds: Math.round(sim.loop.now / 100) / 10,
  };
  for (const p of sim.processes) p.owner.state = { kind: 'dead' };
  const f = (s: Summary) => `${Math.round(s.min)}/${Math.round(s.median)}/${Math.round(s.max)}`;
  log(
    `scaleSim ${size.shards}x${size.tasks} (virtual ms): every shard emitted ${start.allMs}, balanced ${start.balancedMs}; ` +
      `doubling ${f(double.firstEmitMs)}; halving ${f(halve.firstEmitMs)} (min/median/max); kill of a task with ${kill.orphans} shards ` +
      `(session expired after ${kill.sessionExpiredMs}) ${Math.round(kill.firstEmitMs.median)}/${Math.round(kill.firstEmitMs.max)} (median/max); ${run.records.lost} of ${run.records.put} unacked; ` +
      `violations: parents first ${run.violations.parentsFirst.length}, two readers ${run.violations.twoReaders.length}; ZooKeeper reads per doubling ${double.zkReads}, largest listing ${double.largestListingBytes} B; ` +
      `steady per task: ${busy.readsPerTaskPerSecond}/${busy.writesPerTaskPerSecond} reads/writes per s busy, ${idle.readsPerTaskPerSecond}/${idle.writesPerTaskPerSecond} idle; ` +
      `cost ${run.wallSeconds} s wall, ${run.cpuSeconds} s CPU for ${run.virtualSeconds} virtual s`,
  );
  return run;
}

export async function scaleSimBench(sizes: ScaleSize[], log: (line: string) => void): Promise<ScaleSimRun[]> {
  const runs: ScaleSimRun[] = [];
  for (const size of sizes) runs.push(await scaleSimRun(size, log));
  return runs;
}
