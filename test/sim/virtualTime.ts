/**
 * The simulation's event loop: timers on a virtual clock, run one at a time in (time, insertion) order,
 * with every pending promise callback run between two of them, as Node runs microtasks between two
 * macrotasks. Timers belong to an owner (an instance, the ZooKeeper server, the workload): a paused owner's
 * timers wait until it resumes, a dead owner's never run.
 */
import type { Scheduler } from '../../src/core/scheduler';
import type { Random } from './random';

export type OwnerState = { kind: 'running' } | { kind: 'paused'; until: number } | { kind: 'dead' };

export class Owner {
  state: OwnerState = { kind: 'running' };
  constructor(readonly name: string) {}

  get alive(): boolean {
    return this.state.kind !== 'dead';
  }
}

interface Timer {
  at: number;
  seq: number;
  owner: Owner;
  task: () => void;
  cancelled: boolean;
}

/** A binary min-heap of timers on (at, seq): ties run in the order they were scheduled. */
class TimerHeap {
  private readonly items: Timer[] = [];

  get size(): number {
    return this.items.length;
  }

  push(timer: Timer): void {
    const heap = this.items;
    heap.push(timer);
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[parent], heap[i]] = [heap[i], heap[parent]];
      i = parent;
    }
  }

  peek(): Timer | undefined {
    return this.items[0];
  }

  pop(): Timer | undefined {
    const heap = this.items;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l], heap[m])) m = l;
        if (r < heap.length && before(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i], heap[m]];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Timer, b: Timer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Lets every queued promise callback run: Node drains the microtask queue before an immediate. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class SimLoop {
  private clock = 0;
  private seq = 0;
  private readonly timers = new TimerHeap();
  /** Timers run so far (the simulation's "steps"). */
  steps = 0;

  get now(): number {
    return this.clock;
  }

  /** Runs `task` at virtual time `at` (not before now); returns a cancel function. */
  at(owner: Owner, at: number, task: () => void): () => void {
    const timer: Timer = { at: Math.max(this.clock, at), seq: this.seq++, owner, task, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  after(owner: Owner, ms: number, task: () => void): () => void {
    return this.at(owner, this.clock + Math.max(0, ms), task);
  }

  /**
   * Runs timers until virtual time `until`, or until `stop()` says so (asked after each step).
   * `afterStep` runs after every timer and its promise callbacks (the invariant checks); `crashed` gets
   * what a timer threw.
   */
  async run(
    until: number,
    afterStep: () => void,
    stop: () => boolean = () => false,
    crashed: (err: unknown, owner: Owner) => void = (err) => {
      throw err;
    },
  ): Promise<void> {
    for (;;) {
      const next = this.timers.peek();
      if (!next || next.at > until) {
        this.clock = Math.max(this.clock, until);
        return;
      }
      this.timers.pop();
      if (next.cancelled || next.owner.state.kind === 'dead') continue;
      this.clock = next.at;
      const state = next.owner.state;
      if (state.kind === 'paused' && state.until > this.clock) {
        // Frozen: runs when its owner wakes, after what was due before it.
        next.at = state.until;
        next.seq = this.seq++;
        this.timers.push(next);
        continue;
      }
      this.steps += 1;
      try {
        next.task();
      } catch (err) {
        // In production a throwing timer callback is an uncaught exception: the process dies.
        crashed(err, next.owner);
      }
      await settle();
      afterStep();
      if (stop()) return;
    }
  }
}

/**
 * The `Scheduler` one owner (an instance of the spout) sees: the shared virtual clock, its own timers and
 * jitter. Methods are bound (like the real scheduler's): the code may pass `scheduler.random` around alone.
 */
export class VirtualScheduler implements Scheduler {
  constructor(
    private readonly loop: SimLoop,
    readonly owner: Owner,
    private readonly rng: Random,
    private readonly wallBaseMs: number,
  ) {}

  readonly now = (): number => this.loop.now;

  readonly wallNow = (): number => this.wallBaseMs + this.loop.now;

  readonly after = (ms: number, task: () => void): (() => void) => this.loop.after(this.owner, ms, task);

  readonly every = (ms: number, task: () => void): (() => void) => {
    const period = Math.max(1, ms);
    let cancelled = false;
    let cancelNext: () => void = () => undefined;
    const arm = () => {
      cancelNext = this.loop.after(this.owner, period, () => {
        if (cancelled) return;
        arm();
        task();
      });
    };
    arm();
    return () => {
      cancelled = true;
      cancelNext();
    };
  };

  readonly sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        cancel();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const cancel = this.loop.after(this.owner, ms, done);
      signal?.addEventListener('abort', done, { once: true });
    });

  readonly random = (): number => this.rng.next();
}
