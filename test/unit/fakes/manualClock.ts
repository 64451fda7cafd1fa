/** A Scheduler whose time moves only when the test says; timers and sleeps run in time order. */
import type { Scheduler } from '../../../src/core/scheduler';

interface Timer {
  at: number;
  seq: number;
  task: () => void;
  every?: number;
  cancelled: boolean;
}

export class ManualClock implements Scheduler {
  private time = 0;
  private seq = 0;
  private timers: Timer[] = [];

  now(): number {
    return this.time;
  }

  wallNow(): number {
    return Date.UTC(2026, 0, 1) + this.time;
  }

  after(ms: number, task: () => void): () => void {
    return this.add(ms, task);
  }

  every(ms: number, task: () => void): () => void {
    return this.add(ms, task, ms);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const cancel = this.add(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      const onAbort = () => {
        cancel();
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  random(): number {
    return 0.5;
  }

  /** Moves time on by `ms`, running every timer due on the way (and the promise callbacks after each). */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    await settle();
    for (;;) {
      const next = this.timers
        .filter((t) => !t.cancelled && t.at <= until)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.time = next.at;
      if (next.every) next.at += next.every;
      else next.cancelled = true;
      next.task();
      await settle();
    }
    this.time = until;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }

  private add(ms: number, task: () => void, every?: number): () => void {
    const timer: Timer = { at: this.time + Math.max(0, ms), seq: this.seq++, task, every, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }
}

/** Lets every pending promise callback run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}
