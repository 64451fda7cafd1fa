/**
 * The counting proxies of a scale run, out of the driver's process: each proxy process (proxyChild.ts) serves
 * the ZooKeeper and Kinesis proxies of up to `tasksPerProcess` tasks. Per task, the parent holds a copy of
 * what its proxies saw (RemoteZkCounter, RemoteKinesisCounter: the ZkCounter and KinesisCounter the
 * breakdowns read, times in the parent's performance.now()), brought up to date by `sync()` (in bulk, once per
 * phase: nothing streams while the run goes on). Read the counts only after a sync later than the window.
 */
import { ChildLink, type ChildUsage, fromEpoch } from './ipc';
import { callCounts, type KinesisCall, type KinesisCounter } from './kinesisCounter';
import type { ProxyDelta } from './proxyChild';
import { zkCounts, type ZkCounter, type ZkCounts, type ZkRequestEvent } from './zkCounter';

/** SCALE_PROXY_TASKS: tasks whose proxies share one process (default 8). */
export function proxyTasksPerProcess(text = process.env.SCALE_PROXY_TASKS): number {
  const n = Number(text ?? 8);
  if (!Number.isInteger(n) || n < 1) throw new Error(`SCALE_PROXY_TASKS: ${text} is not a positive integer`);
  return n;
}

export class RemoteZkCounter implements ZkCounter {
  readonly events: ZkRequestEvent[] = [];
  readonly notifications: number[] = [];
  pings = 0;
  constructor(readonly port: number) {}
  counts(from?: number, to?: number): ZkCounts {
    return zkCounts(this.events, this.notifications, this.pings, from, to);
  }
  /** Closed by its process. */
  async close(): Promise<void> {}
}

export class RemoteKinesisCounter implements KinesisCounter {
  readonly calls: KinesisCall[] = [];
  constructor(readonly endpoint: string) {}
  counts(from?: number, to?: number): Record<string, number> {
    return callCounts(this.calls, from, to);
  }
  async close(): Promise<void> {}
}

export interface ProxyProcessFigures {
  pid: number;
  tasks: number[];
  /** Its clock against the driver's at the start (ms). */
  skewMs: number;
  usage: ChildUsage;
}

export class Proxies {
  private readonly counters = new Map<number, { zk: RemoteZkCounter; kinesis: RemoteKinesisCounter }>();

  private constructor(
    private readonly links: ChildLink[],
    private readonly tasksPerProcess: number,
  ) {}

  /** Starts the processes for tasks 1..tasks, before the run (their start is not the spouts'). */
  static async start(
    zkPort: number,
    kinesisEndpoint: string,
    tasks: number,
    tasksPerProcess = proxyTasksPerProcess(),
  ): Promise<Proxies> {
    const count = Math.ceil(tasks / tasksPerProcess);
    const links = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        ChildLink.start(`proxies ${i + 1}`, 'proxyChild.ts', [String(zkPort), kinesisEndpoint]),
      ),
    );
    return new Proxies(links, tasksPerProcess);
  }

  private linkOf(task: number): ChildLink {
    return this.links[Math.min(this.links.length - 1, Math.floor((task - 1) / this.tasksPerProcess))];
  }

  /** Task `task`'s proxies (task numbers from 1). */
  async open(task: number): Promise<{ zk: RemoteZkCounter; kinesis: RemoteKinesisCounter }> {
    const ports = await this.linkOf(task).call<{ zkPort: number; kinesisEndpoint: string }>('open', { task });
    const pair = { zk: new RemoteZkCounter(ports.zkPort), kinesis: new RemoteKinesisCounter(ports.kinesisEndpoint) };
    this.counters.set(task, pair);
    return pair;
  }

  /** Brings every task's counters up to what its proxies have seen by now. */
  async sync(): Promise<void> {
    const answers = await Promise.all(this.links.map((l) => l.call<{ at: number; deltas: ProxyDelta[] }>('fetch')));
    for (const { deltas } of answers)
      for (const d of deltas) {
        const pair = this.counters.get(d.task);
        if (!pair) continue;
        const { zk, kinesis } = pair;
        for (const [i, rtt] of d.zkAnswers) zk.events[i].rttMs = rtt;
        for (const e of d.zkEvents) zk.events.push({ ...e, at: fromEpoch(e.at) });
        for (const at of d.notifications) zk.notifications.push(fromEpoch(at));
        zk.pings = d.pings;
        for (const [i, shardId, rtt] of d.callAnswers) {
          kinesis.calls[i].rttMs = rtt;
          if (shardId !== undefined) kinesis.calls[i].shardId = shardId;
        }
        for (const c of d.calls) kinesis.calls.push({ ...c, at: fromEpoch(c.at) });
      }
  }

  /** Each process's CPU and event-loop delay since the last reset; `reset` starts them again. */
  async usage(reset = false): Promise<ProxyProcessFigures[]> {
    return Promise.all(
      this.links.map(async (link, i) => ({
        pid: link.pid,
        tasks: [...this.counters.keys()].filter((t) => this.linkOf(t) === this.links[i]),
        skewMs: Math.round(link.skewMs * 100) / 100,
        usage: await link.call<ChildUsage>('usage', { reset }),
      })),
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.links.map((l) => l.stop()));
  }
}
