/**
 * The first member counts the leases of every member and publishes the counts in one node (`holders`), so
 * that the other members share the shards by count without reading every lease node: a reshard's new leases
 * cost one read each by the first member, not one by every task. The others read the lease names (they know
 * their own leases) and that one node. Written when the counts changed, at most once per PUBLISH_EVERY_MS
 * (the last change is always written, after the wait).
 */
import type { Scheduler } from '../core/scheduler';

/** Between two writes of the counts: a deploy or a reshard changes them hundreds of times a second. */
export const PUBLISH_EVERY_MS = 250;

/** Leases of readable shards held by each member (every member named, 0 when it holds none). */
export function leaseCounts(
  leases: ReadonlyMap<string, string>,
  members: readonly string[],
  readable: readonly string[],
): Map<string, number> {
  const counts = new Map(members.map((m) => [m, 0]));
  for (const shardId of readable) {
    const owner = leases.get(shardId);
    if (owner !== undefined && counts.has(owner)) counts.set(owner, counts.get(owner)! + 1);
  }
  return counts;
}

/**
 * Counts written by a first member that is gone are trusted this long (wall clock), while the new first member
 * writes its own: past it, or when a live member other than the first wrote them (a first member of a release
 * that writes none), every lease node is read instead.
 */
export const ORPHAN_COUNTS_TRUSTED_MS = 30_000;

/** Which counts a member plans from: the published ones, unless it is the first member or they cannot be trusted. */
export function publishedCounts(
  me: string,
  members: readonly string[],
  published: { writer: string; counts: ReadonlyMap<string, number>; writtenAt: number } | undefined,
  wallNow: number,
): ReadonlyMap<string, number> | undefined {
  if (!published || members[0] === undefined || members[0] === me) return undefined;
  if (published.writer === members[0]) return published.counts;
  const orphan = !members.includes(published.writer) && wallNow - published.writtenAt < ORPHAN_COUNTS_TRUSTED_MS;
  return orphan ? published.counts : undefined;
}

export class HolderCountsPublisher {
  private written: string | undefined;
  private pending: ReadonlyMap<string, number> | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  private waiting: (() => void) | undefined;
  private writing = false;

  constructor(
    private readonly deps: {
      scheduler: Scheduler;
      write(counts: ReadonlyMap<string, number>): Promise<void>;
      failed(err: unknown): void;
    },
  ) {}

  /** Writes `counts` unless they are what was written last; soon, not more often than PUBLISH_EVERY_MS. */
  publish(counts: ReadonlyMap<string, number>): void {
    if (keyOf(counts) === this.written) {
      this.pending = undefined;
      return;
    }
    this.pending = counts;
    if (this.waiting || this.writing) return;
    const wait = this.lastAt + PUBLISH_EVERY_MS - this.deps.scheduler.now();
    if (wait <= 0) void this.flush();
    else
      this.waiting = this.deps.scheduler.after(wait, () => {
        this.waiting = undefined;
        void this.flush();
      });
  }

  /** Forgets what was written (another member wrote since, or a new session): the next counts are written. */
  reset(): void {
    this.written = undefined;
    this.pending = undefined;
    this.waiting?.();
    this.waiting = undefined;
  }

  private async flush(): Promise<void> {
    const counts = this.pending;
    this.pending = undefined;
    if (!counts) return;
    this.writing = true;
    this.lastAt = this.deps.scheduler.now();
    try {
      await this.deps.write(counts);
      this.written = keyOf(counts);
    } catch (err) {
      this.deps.failed(err);
    } finally {
      this.writing = false;
    }
    // Counts that came while writing (or those that failed, at the next round's publish).
    if (this.pending) this.publish(this.pending);
  }
}

function keyOf(counts: ReadonlyMap<string, number>): string {
  return JSON.stringify([...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
