/** Where the simulated application lives, and the spout configuration one seed draws. */
import { loadConfig, type SpoutConfig } from '../../src/config/config';
import { basePath } from '../../src/coordination/store';
import type { Random } from './random';

export const WALL_BASE_MS = Date.UTC(2026, 0, 1);
export const STREAM = 'sim-stream';
export const APPLICATION = 'sim-app';
export const ROOT = '/kinesis-spout';
export const BASE = basePath(ROOT, APPLICATION, STREAM);

/**
 * Short timings, so that a run of a few virtual seconds sees many sessions, hand-overs and retries.
 * `planned` runs re-emit nothing on a hand-over whose records are acked before its deadline (handOvers.ts).
 */
export type SimReadMode = 'polling' | 'fanOut';

export function drawConfig(
  r: Random,
  planned: boolean,
  initialPosition: 'LATEST' | 'TRIM_HORIZON',
  readMode: SimReadMode = 'polling',
): SpoutConfig {
  return loadConfig({
    'kinesis.spout': {
      streamName: STREAM,
      region: 'us-east-1',
      applicationName: APPLICATION,
      initialPosition,
      readMode,
      zookeeper: { connect: 'sim:2181', sessionTimeoutMs: r.int(1_000, 4_000), root: ROOT },
      maxEmitPerNext: r.int(1, 50),
      maxRecordsPerRequest: r.int(5, 100),
      idlePollIntervalMs: r.int(200, 600),
      shardBufferSize: r.int(10, 200),
      // Below about 50, a shard reads too slowly (acks behind one slow ack hold its half of the cap) to converge within the bound.
      maxRecordsInMemory: r.int(50, 400),
      checkpointIntervalMs: r.int(50, 600),
      rebalanceIntervalMs: r.int(200, 1_500),
      shardSyncIntervalMs: r.int(1_000, 3_000),
      // Planned runs: the default (5 s) in some, shorter in others, so that some hand-overs reach their
      // deadline with acks still owed (handOvers.ts says what that may re-emit).
      ...(planned ? plannedHandoff(r) : { handoffTimeoutMs: r.int(100, 2_000) }),
      // Unlimited: the checks expect every record acked, poison ones included once the faults stop.
      retry: {
        maxRetries: -1,
        initialBackoffMs: r.int(5, 100),
        maxBackoffMs: planned ? r.int(200, 1_000) : r.int(200, 2_000),
      },
    },
  });
}

/** The default hand-over timeout (the key left out) in 2 planned runs of 5, 1–5 s in 3 of 10, 0.1–1 s in the rest. */
function plannedHandoff(r: Random): { handoffTimeoutMs?: number } {
  const draw = r.next();
  if (draw < 0.4) return {};
  return { handoffTimeoutMs: draw < 0.7 ? r.int(1_000, 4_999) : r.int(100, 999) };
}

/** The parts of the configuration a trace starts with. */
export function configSummary(c: SpoutConfig): Record<string, unknown> {
  return {
    readMode: c.readMode,
    initialPosition: c.initialPosition,
    sessionTimeoutMs: c.zookeeper.sessionTimeoutMs,
    maxEmitPerNext: c.maxEmitPerNext,
    maxRecordsPerRequest: c.maxRecordsPerRequest,
    shardBufferSize: c.shardBufferSize,
    maxRecordsInMemory: c.maxRecordsInMemory,
    checkpointIntervalMs: c.checkpointIntervalMs,
    rebalanceIntervalMs: c.rebalanceIntervalMs,
    handoffTimeoutMs: c.handoffTimeoutMs,
  };
}
