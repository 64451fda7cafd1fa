/**
 * Publishes each held shard's smoothed load into its lease node (balance "throughput"), when
 * shard/throughput.ts says it is due: through the shard's own write queue, so it never races its
 * checkpoint, SHARD_END or release. A failed write is tried again at a later tick.
 */
import { publishLoad } from '../coordination/leaseLoads';
import { describeError } from '../errors';
import { LogLevel, type Reporter } from '../core/log';
import type { Session } from '../coordination/session';
import type { OwnedShard } from './ownedShard';
import { publishDue, storedLoad } from './throughput';

export function publishLoads(
  shards: Iterable<OwnedShard>,
  session: Pick<Session, 'zk' | 'store'>,
  now: number,
  reporter: Pick<Reporter, 'log'>,
): void {
  for (const shard of shards) {
    if (shard.phase.kind !== 'reading') continue;
    const { throughput } = shard;
    const since = throughput.measuredSince;
    if (since === undefined) continue;
    const load = storedLoad(throughput.load(now));
    if (!publishDue(throughput.published, load, now, since)) continue;
    // Marked at once, so the next tick does not queue it again while this write waits.
    const before = throughput.published;
    throughput.publication({ load, at: now });
    void shard.writes
      .run(async () => {
        if (shard.phase.kind !== 'reading') return;
        const result = await publishLoad(session.zk, session.store, shard.shardId, load, throughput.leaseVersion);
        // Not ours any more: the round forgets it. Ours at another version (a lost reply): again next tick.
        if (!result) return;
        throughput.leaseWritten(result.version);
        if (!result.written) throughput.publication(before);
      })
      .catch((err) => {
        throughput.publication(before);
        reporter.log(LogLevel.Debug, `publishing the load of ${shard.shardId} failed: ${describeError(err)}`);
      });
  }
}
