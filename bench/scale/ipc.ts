/**
 * The scale harness's helper processes (the counting proxies, the producer): each a `child_process.fork` of a
 * TypeScript entry (run through tsx) with an IPC channel, asked by request/response (`call`), silent on
 * stdout, stopped by pid at the end and gone as soon as the parent is (they exit when the channel closes).
 *
 * Times across processes: performance.now() counts from each process's own start, so a child never sends it
 * as such. It sends `epochNow()` (performance.timeOrigin + performance.now(): epoch ms with fractions) and the
 * parent turns it into its own performance.now() with `fromEpoch`. Both origins come from the same system
 * clock at each process's start, so a time crosses with an error of well under a millisecond (ChildLink.start
 * measures it against a round trip: `skewMs`), as long as the wall clock is not stepped during a run.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** performance.now() as epoch ms (with fractions): comparable between processes. */
export const epochNow = (): number => performance.timeOrigin + performance.now();
/** An epoch ms time from another process -> this process's performance.now(). */
export const fromEpoch = (epochMs: number): number => epochMs - performance.timeOrigin;

interface Request {
  id: number;
  op: string;
  args?: unknown;
}
interface Reply {
  id: number;
  value?: unknown;
  error?: string;
}

/** What a child says of itself since its start (or the last `reset`): CPU (µs) and event-loop delay (ms). */
export interface ChildUsage {
  cpuMicros: number;
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

/** Parent side: one helper process. */
export class ChildLink {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private exited: Promise<void>;
  /** The child's epoch clock against ours (ms) at the start, ± half a round trip: how far `fromEpoch` may be off. */
  skewMs = 0;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((done) => child.once('exit', () => done()));
    child.on('message', (message: Reply) => {
      const waiter = this.waiting.get(message.id);
      if (!waiter) return;
      this.waiting.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(`${name}: ${message.error}`));
      else waiter.resolve(message.value);
    });
    child.once('exit', (code, signal) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`${name} exited (${code ?? signal})`));
      this.waiting.clear();
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Forks `script` (a path under bench/scale/) with `args`; resolves once it answers. */
  static async start(name: string, script: string, args: string[]): Promise<ChildLink> {
    const child = fork(resolve(__dirname, script), args, {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      // As `npm run bench` runs the driver: no Node or SDK warnings on stderr.
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
      // stdout ignored: nothing of theirs in the bench's output; stderr kept for a crash's stack.
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    live.add(child);
    child.once('exit', () => live.delete(child));
    const link = new ChildLink(name, child);
    await link.call('now'); // up: tsx loaded, the handlers listening
    // The skew: their clock against the middle of our round trip, from the shortest of a few.
    let best = { rtt: Infinity, skew: 0 };
    for (let i = 0; i < 5; i += 1) {
      const before = epochNow();
      const theirs = await link.call<number>('now');
      const after = epochNow();
      if (after - before < best.rtt) best = { rtt: after - before, skew: theirs - (before + after) / 2 };
    }
    link.skewMs = best.skew;
    return link;
  }

  call<T>(op: string, args?: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, op, args } satisfies Request, (err) => {
        if (!err) return;
        this.waiting.delete(id);
        reject(new Error(`${this.name}: ${err.message}`));
      });
    });
  }

  /** Asks the child to stop (`stop`), then SIGKILL by pid if it has not exited within `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    await this.call('stop').catch(() => undefined);
    const timer = setTimeout(() => {
      if (this.child.pid !== undefined && this.child.exitCode === null) process.kill(this.child.pid, 'SIGKILL');
    }, graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Children still running when the parent exits are killed (they would exit anyway, their channel closed). */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) {
    try {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
});

/**
 * Child side: answers the parent's calls with `handlers`; `now`, `usage` and `stop` are built in (`stop` runs
 * `onStop` and exits). Exits when the channel closes (the parent gone).
 */
export function serve(
  handlers: Record<string, (args: never) => unknown>,
  onStop: () => Promise<void> | void = () => undefined,
): void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let cpuFrom = process.cpuUsage();
  const usage = (args: { reset?: boolean } | undefined): ChildUsage => {
    const cpu = process.cpuUsage(cpuFrom);
    const figures = {
      cpuMicros: cpu.user + cpu.system,
      loopDelayP50Ms: Math.round(delay.percentile(50) / 1e5) / 10,
      loopDelayP99Ms: Math.round(delay.percentile(99) / 1e5) / 10,
      loopDelayMaxMs: Math.round(delay.max / 1e5) / 10,
    };
    if (args?.reset) {
      cpuFrom = process.cpuUsage();
      delay.reset();
    }
    return figures;
  };
  const all: Record<string, (args: never) => unknown> = {
    now: () => epochNow(),
    usage: usage as (args: never) => unknown,
    stop: async () => {
      await onStop();
      setImmediate(() => process.exit(0));
    },
    ...handlers,
  };
  process.on('message', async (message: Request) => {
    let reply: Reply;
    try {
      const handler = all[message.op];
      if (!handler) throw new Error(`unknown call ${message.op}`);
      reply = { id: message.id, value: await handler(message.args as never) };
    } catch (err) {
      reply = { id: message.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    }
    process.send?.(reply);
  });
  process.on('disconnect', () => process.exit(0));
}
