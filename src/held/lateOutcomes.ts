/**
 * Emissions a shard still had out when this process let it go. Storm sends their ack or fail later, with
 * the same message id as a later emission of the same record if the shard comes back here: such an
 * outcome belongs to the old emission and must not ack, fail or re-emit the new one.
 */
export class LateOutcomes {
  /** Message id → outstanding old emissions, and until when (monotonic ms) to wait for them. */
  private readonly pending = new Map<string, { count: number; until: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly waitMs: number,
  ) {}

  /** The shard was let go with these records emitted and not acked. */
  expect(ids: Iterable<string>, now: number): void {
    for (const id of ids) {
      const entry = this.pending.get(id);
      if (entry) {
        entry.count += 1;
        entry.until = now + this.waitMs;
      } else this.pending.set(id, { count: 1, until: now + this.waitMs });
    }
    // Oldest first (insertion order): past the cap, the oldest expectations are given up.
    for (const id of this.pending.keys()) {
      if (this.pending.size <= this.maxEntries) break;
      this.pending.delete(id);
    }
  }

  /** True when this outcome is taken to be an old emission's (and is used up). */
  consume(id: string, now: number): boolean {
    const entry = this.pending.get(id);
    if (!entry) return false;
    if (--entry.count <= 0 || entry.until < now) this.pending.delete(id);
    return entry.until >= now;
  }

  get size(): number {
    return this.pending.size;
  }
}
