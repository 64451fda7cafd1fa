/**
 * Time, timers and jitter come in through this one interface: real in production, virtual in the
 * deterministic simulation (test/sim), so every wait and every random choice can be replayed from a seed.
 */
export interface Scheduler {
  /** Monotonic milliseconds (leases are trusted by it; never goes back). */
  now(): number;
  /** Wall-clock milliseconds since the epoch (only for what is stored or shown to people). */
  wallNow(): number;
  /** Runs `task` once after `ms`; the returned function cancels it. */
  after(ms: number, task: () => void): () => void;
  /** Runs `task` every `ms`; the returned function cancels it. */
  every(ms: number, task: () => void): () => void;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in [0, 1), for jitter. */
  random(): number;
}

/** Node's timers, unref'd: a pending timer never keeps the process alive on its own. */
export const realScheduler: Scheduler = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  after(ms, task) {
    const timer = setTimeout(task, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
  every(ms, task) {
    const timer = setInterval(task, Math.max(1, ms));
    timer.unref();
    return () => clearInterval(timer);
  },
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  },
  random: () => Math.random(),
};

/** Resolves when `work` settles (never rejects) or at once when `signal` aborts: a wait a stop may cut short. */
export function untilAborted(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    work.then(done, done);
  });
}

/** `work`, or `onTimeout()` as a rejection once `ms` pass first: every wait on a remote party is bounded. */
export function within<T>(scheduler: Scheduler, ms: number, work: Promise<T>, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = scheduler.after(ms, () => reject(onTimeout()));
    work.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (err: unknown) => {
        cancel();
        reject(err);
      },
    );
  });
}
