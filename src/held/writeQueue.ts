/**
 * The ZooKeeper writes of one shard (checkpoints, SHARD_END, the release) run one after another, so none
 * starts from a version another is about to change, and a release never skips the acks of a running flush.
 */
export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting: Promise<void> | undefined;

  /** Runs `task` after every write queued before it. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /**
   * Like `run`, but while a write queued this way has not started yet, asking again joins it: it reads
   * what to write when it starts, so one write covers every ask before it.
   */
  coalesce(task: () => Promise<void>): Promise<void> {
    this.waiting ??= this.run(() => {
      this.waiting = undefined;
      return task();
    });
    return this.waiting;
  }

  /** Resolves once every write queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
