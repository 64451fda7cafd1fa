/**
 * Drops what ZooKeeper holds about shards the stream no longer lists (expired after retention), so the
 * state does not grow as the stream reshards for months. A shard must be missing from two unfiltered
 * listings in a row and leased by no one; one task (the first member) does it.
 */
import type { ShardNode } from '../core/shard';
import { describeError } from '../errors';
import type { Session } from '../coordination/session';
import { LogLevel, type Reporter } from '../core/log';

export class ExpiredShards {
  /** Recorded shards missing from the last unfiltered listing. */
  private missingBefore = new Set<string>();

  constructor(private readonly reporter: Reporter) {}

  /** After an unfiltered listing; `isHeld` tells the shards this process still holds. Never throws. */
  async forget(session: Session, listing: readonly ShardNode[], isHeld: (shardId: string) => boolean): Promise<void> {
    try {
      const listed = new Set(listing.map((s) => s.shardId));
      const leased = await session.store.leasedShards();
      const missing = [...(await session.store.recordedShards())].filter(
        (id) => !listed.has(id) && !isHeld(id) && !leased.has(id),
      );
      const confirmed = missing.filter((id) => this.missingBefore.has(id));
      this.missingBefore = new Set(missing);
      for (const shardId of confirmed) await session.store.forgetShard(shardId);
      if (confirmed.length > 0)
        this.reporter.log(
          LogLevel.Info,
          `forgot ${confirmed.length} shard(s) no longer in the stream: ${confirmed.join(', ')}`,
        );
    } catch (err) {
      this.reporter.log(LogLevel.Warn, `cleaning up expired shards failed: ${describeError(err)}`);
    }
  }
}
