/**
 * The delivery modes (config `delivery`, as storm-kafka-client names them), as far as one shard is concerned:
 *
 * - `at-least-once`: tuples carry message ids; the checkpoint passes only records below which every one is
 *   acked; failed ones are re-emitted. A crash repeats what was in flight.
 * - `at-most-once`: the checkpoint is written past each fetched batch (one write covering it, confirmed by
 *   ZooKeeper) before any of its records is emitted. A crash loses what was fetched and not yet emitted; no
 *   record is ever emitted twice. Fails are not replayed.
 * - `none`: records are emitted as read; the checkpoint follows the last one emitted, written every
 *   `checkpointIntervalMs`. A crash repeats what was emitted since the last write. Fails are not replayed.
 *
 * With `tupleTracking` (the last two only) tuples carry message ids anyway, so that Storm's
 * `topology.max.spout.pending` and complete latency work: their acks and fails only release them.
 */
import type { Delivery, SpoutConfig } from '../config/config';
import { compareAfter, type Position } from '../core/position';

export interface ShardDelivery {
  mode: Delivery;
  /** Tuples carry message ids and stay in flight until Storm acks or fails them. */
  tracked: boolean;
}

export const AT_LEAST_ONCE: ShardDelivery = { mode: 'at-least-once', tracked: true };

export function deliveryOf(config: Pick<SpoutConfig, 'delivery' | 'tupleTracking'>): ShardDelivery {
  return config.delivery === 'at-least-once'
    ? AT_LEAST_ONCE
    : { mode: config.delivery, tracked: config.tupleTracking === true };
}

/** at-most-once: a record may be emitted once the stored checkpoint is at or past it. */
export function covers(
  stored: Position | undefined,
  record: { sequenceNumber: string; subSequence?: number },
): boolean {
  if (stored?.kind !== 'AFTER') return false;
  return compareAfter(record, stored) <= 0;
}

/**
 * What a shard being handed over still waits for before its last checkpoint and release: at-least-once,
 * the acks of what it emitted (the taker would re-emit it); at-most-once, the records it already
 * checkpointed past but did not emit yet (lost otherwise); none, nothing (the checkpoint follows what was
 * emitted, and outcomes are never replayed).
 */
export function releaseWait(mode: Delivery, inFlight: number, claimedBuffered: number): number {
  switch (mode) {
    case 'at-least-once':
      return inFlight;
    case 'at-most-once':
      return claimedBuffered;
    case 'none':
      return 0;
  }
}
