/**
 * A running system under test: spout processes pumped side by side as Storm tasks, a producer putting
 * keyed records, and the evidence the invariants are checked on (first deliveries, who emitted which
 * shard when, duplicates).
 */
import { putRecords, type PutResult } from './kinesisAdmin';
import { seededRandom } from './seededRandom';
import { spoutConf, type Services } from './fixture';
import { StormDriver, type Emit } from './stormDriver';

export interface Delivery {
  at: number;
  pid: number;
}

/** Tuples the topology fails: a seeded share of emissions, each failed once per emission. */
export interface FailurePolicy {
  rate: number;
  seed: number;
}

export class Flow {
  readonly spouts: StormDriver[] = [];
  /** Per message id: emissions and fails (a fail's re-emit is no duplicate). */
  readonly emitsById = new Map<string, number>();
  readonly failsById = new Map<string, number>();
  private random: () => number = Math.random;
  private failRate = 0;
  readonly put: { id: string; key: string; at: number }[] = [];
  readonly firstDelivery = new Map<string, Delivery>();
  /**
   * Per shard, per tenure (a process between two of its own "lease on <shard> taken" logs): first and
   * last emit time. Two tenures of different processes must not overlap: one reader at a time.
   */
  readonly emitSpans = new Map<string, Map<string, [number, number]>>();
  private readonly tenures = new Map<StormDriver, { logsSeen: number; takes: Map<string, number> }>();
  emitted = 0;
  private pumps: Promise<boolean>[] = [];
  private stopped = false;
  private producing: Promise<void> | undefined;
  private stopProducing = false;
  private nextRecord = 0;
  /** Topology conf beside `kinesis.spout` for processes added from now on (a metrics registration, `storm.id`). */
  topologyConf: Record<string, unknown> = {};
  /** With more than 0: each emit is acked after a random delay up to this, not at once (and not awaited). */
  private ackWithinMs = 0;
  /** Processes Storm has deactivated: they get no `next` (acks and fails still reach them). */
  private readonly inactive = new Set<StormDriver>();

  constructor(
    private readonly services: Pick<Services, 'zk' | 'kinesis' | 'client'>,
    readonly stream: string,
    readonly app: string,
    /** Spout configuration overrides for processes added from now on. */
    readonly overrides: Record<string, unknown> = {},
    private readonly keys = 32,
  ) {}

  /** From now on, fail this share of emissions (seeded). */
  failTuples(policy: FailurePolicy): void {
    this.random = seededRandom(policy.seed);
    this.failRate = policy.rate;
  }

  /**
   * Starts one more spout process (a Storm task) and pumps it until the flow stops or the process dies.
   * `componentTasks`: the spout's task ids as the topology declares them (default: this task alone).
   */
  async addSpout(
    taskIndex = this.spouts.length + 1,
    componentTasks = [taskIndex],
    /** The spout's script (default: the one this checkout built). */
    script?: string,
  ): Promise<StormDriver> {
    const driver = await StormDriver.start({
      conf: { ...this.topologyConf, 'kinesis.spout': spoutConf(this.services, this.stream, this.app, this.overrides) },
      taskId: taskIndex,
      componentTasks,
      script,
    });
    this.spouts.push(driver);
    this.pumps.push(
      driver.pump(() => this.stopped, {
        timeoutMs: 600_000,
        onEmit: (emit) => this.onEmit(driver, emit),
        paused: () => this.inactive.has(driver),
      }),
    );
    return driver;
  }

  /** From now on, ack each emit after a random delay up to `ms`, as a topology whose bolts take that long. */
  ackWithin(ms: number): void {
    this.ackWithinMs = ms;
  }

  /** `storm deactivate` as one task sees it: `deactivate`, then no more `next` until `activate`. */
  async deactivate(driver: StormDriver): Promise<void> {
    this.inactive.add(driver);
    await driver.deactivate();
  }

  async activate(driver: StormDriver): Promise<void> {
    await driver.activate();
    this.inactive.delete(driver);
  }

  /** The longest wait from put to first emit of the records put from `since` (performance.now() ms) on. */
  longestWait(since = 0): number {
    let longest = 0;
    for (const p of this.put) {
      const first = this.firstDelivery.get(p.id);
      if (p.at >= since && first) longest = Math.max(longest, first.at - p.at);
    }
    return longest;
  }

  private async onEmit(driver: StormDriver, emit: Emit): Promise<void> {
    // When the process emitted it, not when this loop got to it (acks of earlier emits take time).
    const at = emit.receivedAt;
    this.emitted += 1;
    if (!this.firstDelivery.has(emit.id)) this.firstDelivery.set(emit.id, { at, pid: driver.pid });
    const shard = emit.id.split(':')[0];
    const tenure = `${driver.pid}#${this.takesBefore(driver, emit, shard)}`;
    const spans = this.emitSpans.get(shard) ?? new Map<string, [number, number]>();
    const span = spans.get(tenure);
    spans.set(tenure, span ? [span[0], at] : [at, at]);
    this.emitSpans.set(shard, spans);
    this.emitsById.set(emit.id, (this.emitsById.get(emit.id) ?? 0) + 1);
    if (this.failRate > 0 && this.random() < this.failRate) {
      this.failsById.set(emit.id, (this.failsById.get(emit.id) ?? 0) + 1);
      await driver.fail(emit.id);
    } else if (this.ackWithinMs > 0) setTimeout(() => void driver.ack(emit.id), Math.random() * this.ackWithinMs);
    else await driver.ack(emit.id);
  }

  /** Emissions that neither a first delivery nor a failed one explains: records emitted again without cause. */
  unexplainedEmits(): string[] {
    return [...this.emitsById]
      .filter(([id, n]) => n > 1 + (this.failsById.get(id) ?? 0))
      .map(([id, n]) => `${id} emitted ${n} times, failed ${this.failsById.get(id) ?? 0}`);
  }

  private takesBefore(driver: StormDriver, emit: Emit, shard: string): number {
    const state = this.tenures.get(driver) ?? { logsSeen: 0, takes: new Map<string, number>() };
    this.tenures.set(driver, state);
    for (; state.logsSeen < emit.logsBefore; state.logsSeen += 1) {
      const taken = /^lease on (\S+) taken/.exec(driver.logs[state.logsSeen].msg);
      if (taken) state.takes.set(taken[1], (state.takes.get(taken[1]) ?? 0) + 1);
    }
    return state.takes.get(shard) ?? 0;
  }

  /** Processes that emitted from `shard`. */
  readersOf(shard: string): number[] {
    return [...new Set([...(this.emitSpans.get(shard)?.keys() ?? [])].map((tenure) => Number(tenure.split('#')[0])))];
  }

  /** First emit of `shard` by a process other than `pid`, after `since`. */
  firstEmitByOthers(shard: string, pid: number, since: number): number | undefined {
    const starts = [...(this.emitSpans.get(shard) ?? [])]
      .filter(([tenure, span]) => !tenure.startsWith(`${pid}#`) && span[0] >= since)
      .map(([, span]) => span[0]);
    return starts.length ? Math.min(...starts) : undefined;
  }

  /** Puts `n` records (keys round robin) in batches; resolves when they are all in the stream. */
  async putBatch(n: number): Promise<PutResult[]> {
    const records = Array.from({ length: n }, () => {
      const i = this.nextRecord++;
      return { partitionKey: `key-${i % this.keys}`, data: JSON.stringify({ i }) };
    });
    const results = await putRecords(this.services.client, this.stream, records);
    const at = performance.now();
    results.forEach((r, j) =>
      this.put.push({ id: `${r.shardId}:${r.sequenceNumber}`, key: records[j].partitionKey, at }),
    );
    return results;
  }

  /** Keeps putting small batches until stopProducer(). */
  startProducer(batch = 50, pauseMs = 100): void {
    this.producing = (async () => {
      while (!this.stopProducing) {
        await this.putBatch(batch);
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    })();
  }

  async stopProducer(): Promise<void> {
    this.stopProducing = true;
    await this.producing;
  }

  missing(): string[] {
    return this.put.filter((p) => !this.firstDelivery.has(p.id)).map((p) => p.id);
  }

  async waitAllDelivered(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.missing().length > 0) {
      if (Date.now() > deadline)
        throw new Error(
          `${this.missing().length} of ${this.put.length} records never delivered, e.g. ${this.missing().slice(0, 3).join(', ')}\n${this.logs()}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.stopProducer();
    await Promise.all(this.pumps);
    await Promise.all(this.spouts.map((s) => s.stop(3_000)));
  }

  /** For each partition key, first deliveries in the order the records were put. */
  orderViolations(): string[] {
    const byKey = new Map<string, string[]>();
    for (const p of this.put) byKey.set(p.key, [...(byKey.get(p.key) ?? []), p.id]);
    const violations: string[] = [];
    for (const [key, ids] of byKey) {
      for (let i = 1; i < ids.length; i += 1) {
        const a = this.firstDelivery.get(ids[i - 1]);
        const b = this.firstDelivery.get(ids[i]);
        if (a && b && b.at < a.at) violations.push(`${key}: ${ids[i]} delivered before ${ids[i - 1]}`);
      }
    }
    return violations;
  }

  /** Shards emitted by two processes over overlapping tenures. */
  concurrentReaders(): string[] {
    const overlaps: string[] = [];
    for (const [shard, spans] of this.emitSpans) {
      const sorted = [...spans.entries()].sort((a, b) => a[1][0] - b[1][0]);
      for (let i = 1; i < sorted.length; i += 1) {
        for (let j = 0; j < i; j += 1) {
          const [a, b] = [sorted[j], sorted[i]];
          if (a[0].split('#')[0] !== b[0].split('#')[0] && b[1][0] < a[1][1])
            overlaps.push(`${shard}: ${a[0]} ${JSON.stringify(a[1])} and ${b[0]} ${JSON.stringify(b[1])}`);
        }
      }
    }
    return overlaps;
  }

  duplicates(): number {
    return this.emitted - this.firstDelivery.size;
  }

  logs(): string {
    return this.spouts.map((s) => `--- spout pid ${s.pid}\n${s.logText()}`).join('\n');
  }
}
