/**
 * One shard's life in this process, as a pure function: `transition(phase, event)` gives the next phase and
 * the effects to carry out (executor.ts does them; their outcomes come back as events). Nothing else
 * decides a phase. Every phase names its successors (a pair not in this table leaves the phase as it is,
 * with no effect):
 *
 * | phase                | event                      | next phase              | effects                                    |
 * | -------------------- | -------------------------- | ----------------------- | ------------------------------------------ |
 * | starting             | started (a position)       | reading                 | startReader                                |
 * | starting             | started (SHARD_END)        | closing lease           | deleteLease                                |
 * | starting             | startFailed                | gone                    | letGo, deleteLease (outcome ignored)       |
 * | reading              | active / inactive          | reading (un)paused      | resumeReader / pauseReader                 |
 * | reading              | endReached                 | draining                | stopReader, learnChildren                  |
 * | reading, draining    | release                    | releasing               | stopReader (if reading), dropBuffer        |
 * | reading, draining,   | flush                      | (same)                  | writeCheckpoint                            |
 * |   releasing          |                            |                         |                                            |
 * | draining             | tick, nothing buffered     | draining announced      | markEnded (ordering "parents-emitted")     |
 * | draining             | endAnnounceFailed          | draining not announced  |                                            |
 * | draining             | tick, drained, not waiting | closing shardEnd        | writeShardEnd                              |
 * | releasing            | tick, handed over or past  | closing checkpoint      | writeCheckpoint (final)                    |
 * |                      |   the deadline, not waiting|                         |                                            |
 * | closing shardEnd     | shardEndWritten            | gone                    | letGo (finished), changed                  |
 * | closing shardEnd     | shardEndRefused            | closing lease           | deleteLease                                |
 * | closing shardEnd     | writeFailed                | draining (waiting)      |                                            |
 * | closing checkpoint   | checkpointWritten          | closing lease           | deleteLease                                |
 * | closing checkpoint   | writeFailed                | releasing (waiting)     |                                            |
 * | closing lease        | leaseDeleted               | gone                    | letGo (released), changed                  |
 * | closing lease        | writeFailed                | givingBack              |                                            |
 * | givingBack           | tick, wait over            | closing lease           | deleteLease                                |
 * | any but gone         | forget                     | gone                    | stopReader (if reading), letGo (forgotten) |
 * | starting, reading,   | shutdown                   | gone                    | stopReader (if reading), writeCheckpoint,  |
 * |   draining, releasing|                            |                         |   deleteLease (at exit)                    |
 * | closing *, givingBack| shutdown                   | gone                    | deleteLease (at exit)                      |
 * | gone                 | (any)                      | gone                    |                                            |
 *
 * Records are emitted only in reading, draining and releasing (releasing: only failed ones again); once the
 * lease's delete was sent (closing lease, givingBack), never again. No checkpoint is written once SHARD_END
 * was or the lease's delete is on its way; SHARD_END only with nothing buffered and nothing in flight.
 */
import type { PhaseKind } from '../core/phase';
import type { Position } from '../core/position';
import type { ShardNode } from '../core/shard';
import type { ReadPosition } from '../kinesis/reader';

export type { ReadPosition };

export type ShardPhase =
  /** The lease is ours; its checkpoint is being read (written first from the start position if it had none). */
  | { kind: 'starting' }
  | { kind: 'reading'; paused: boolean }
  /** Read to its end (or expired): emitting the rest, waiting for acks; `retryAt` after a failed SHARD_END. */
  | { kind: 'draining'; endedAt: number; announced: boolean; retryAt?: number }
  /** Handing the lease over: no new records, failed ones re-emitted until acked or the deadline. */
  | { kind: 'releasing'; deadline: number; reason: string; retryAt?: number }
  /** A write is on its way: SHARD_END, the last checkpoint, or the lease's delete. Nothing is emitted. */
  | { kind: 'closing'; step: 'shardEnd'; endedAt: number }
  | { kind: 'closing'; step: 'checkpoint'; reason: string }
  | { kind: 'closing'; step: 'lease' }
  /** The lease's delete failed with its outcome unknown (a lost reply): nothing is emitted; retried. */
  | { kind: 'givingBack'; retryAt: number }
  /** Let go: no longer held here (its records still out may be acked or failed later). */
  | { kind: 'gone' };

/** Every phase is one the round knows by name (core/phase.ts), and every name it knows is a phase: else this does not build. */
export type PhaseKindsAgree = MustBeTrue<Same<ShardPhase['kind'], PhaseKind>>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type MustBeTrue<T extends true> = T;

export type ShardEvent =
  | { kind: 'started'; from: Position }
  | { kind: 'startFailed' }
  /** `children`: as Kinesis named them at the shard's end (ChildShards; none on emulators, or when expired). */
  | { kind: 'endReached'; now: number; children: readonly ShardNode[] }
  | { kind: 'release'; deadline: number; reason: string }
  | { kind: 'active'; active: boolean }
  | { kind: 'flush' }
  /** The periodic look: what the shard holds now, and whether its end is announced (ordering "parents-emitted"). */
  | { kind: 'tick'; now: number; buffered: number; inFlight: number; announceEnd: boolean }
  | { kind: 'endAnnounceFailed' }
  | { kind: 'shardEndWritten' }
  | { kind: 'shardEndRefused' }
  | { kind: 'checkpointWritten' }
  | { kind: 'leaseDeleted' }
  | { kind: 'writeFailed'; now: number }
  | { kind: 'forget' }
  | { kind: 'shutdown' };

export type ShardEffect =
  | { kind: 'startReader'; from: ReadPosition }
  | { kind: 'stopReader' }
  | { kind: 'pauseReader' }
  | { kind: 'resumeReader' }
  | { kind: 'dropBuffer' }
  /** The listing learns the children (none given: it lists again before the next round). */
  | { kind: 'learnChildren'; children: readonly ShardNode[] }
  /** Moves the checkpoint to what is acked, if that is ahead; `final` before a hand-over (its outcome is an event). */
  | { kind: 'writeCheckpoint'; final: boolean }
  | { kind: 'writeShardEnd'; endedAt: number }
  | { kind: 'markEnded' }
  /** `atExit`: at shutdown, its outcome is not waited on as an event. */
  | { kind: 'deleteLease'; atExit: boolean }
  | { kind: 'letGo'; how: 'finished'; endedAt: number }
  | { kind: 'letGo'; how: 'released' | 'forgotten' }
  | { kind: 'changed' };

export interface Step {
  phase: ShardPhase;
  effects: ShardEffect[];
}

/** A phase as the table names it: its kind, and for closing which write is on its way. */
export type PhaseName = Exclude<PhaseKind, 'closing'> | `closing ${Extract<ShardPhase, { kind: 'closing' }>['step']}`;

export function phaseName(phase: ShardPhase): PhaseName {
  return phase.kind === 'closing' ? `closing ${phase.step}` : phase.kind;
}

/** Every phase and the phases it may go to (besides staying): the table above, for tests and readers. */
export const SUCCESSORS: Readonly<Record<PhaseName, readonly PhaseName[]>> = {
  starting: ['reading', 'closing lease', 'gone'],
  reading: ['draining', 'releasing', 'gone'],
  draining: ['releasing', 'closing shardEnd', 'gone'],
  releasing: ['closing checkpoint', 'gone'],
  'closing shardEnd': ['draining', 'closing lease', 'gone'],
  'closing checkpoint': ['releasing', 'closing lease', 'gone'],
  'closing lease': ['givingBack', 'gone'],
  givingBack: ['closing lease', 'gone'],
  gone: [],
};

/** A failed write is tried again this long after. */
export const WRITE_RETRY_MS = 500;

const stay = (phase: ShardPhase): Step => ({ phase, effects: [] });

/** True while records of the shard may be emitted (new ones in reading and draining, failed ones again in releasing). */
export function mayEmit(phase: ShardPhase): boolean {
  return phase.kind === 'reading' || phase.kind === 'draining' || phase.kind === 'releasing';
}

export function transition(phase: ShardPhase, event: ShardEvent): Step {
  if (phase.kind === 'gone') return stay(phase);
  if (event.kind === 'forget')
    return {
      phase: { kind: 'gone' },
      effects: [...stopIfReading(phase), { kind: 'letGo', how: 'forgotten' }],
    };
  if (event.kind === 'shutdown') return shutdown(phase);
  switch (phase.kind) {
    case 'starting':
      return starting(event);
    case 'reading':
      return reading(phase, event);
    case 'draining':
      return draining(phase, event);
    case 'releasing':
      return releasing(phase, event);
    case 'closing':
      return closing(phase, event);
    case 'givingBack':
      return event.kind === 'tick' && event.now >= phase.retryAt ? deleteLease() : stay(phase);
  }
}

function stopIfReading(phase: ShardPhase): ShardEffect[] {
  return phase.kind === 'reading' ? [{ kind: 'stopReader' }] : [];
}

function deleteLease(): Step {
  return { phase: { kind: 'closing', step: 'lease' }, effects: [{ kind: 'deleteLease', atExit: false }] };
}

function shutdown(phase: Exclude<ShardPhase, { kind: 'gone' }>): Step {
  const atExit: ShardEffect = { kind: 'deleteLease', atExit: true };
  // Once SHARD_END or the lease's delete is on its way, no checkpoint may follow it.
  const lastCheckpoint = mayEmit(phase) || phase.kind === 'starting';
  return {
    phase: { kind: 'gone' },
    effects: lastCheckpoint ? [...stopIfReading(phase), { kind: 'writeCheckpoint', final: false }, atExit] : [atExit],
  };
}

function starting(event: ShardEvent): Step {
  if (event.kind === 'startFailed')
    return {
      phase: { kind: 'gone' },
      effects: [
        { kind: 'letGo', how: 'forgotten' },
        { kind: 'deleteLease', atExit: true },
      ],
    };
  if (event.kind !== 'started') return stay({ kind: 'starting' });
  const from = event.from;
  if (from.kind === 'SHARD_END') return deleteLease();
  return { phase: { kind: 'reading', paused: false }, effects: [{ kind: 'startReader', from }] };
}

function reading(phase: Extract<ShardPhase, { kind: 'reading' }>, event: ShardEvent): Step {
  switch (event.kind) {
    case 'active':
      if (event.active !== phase.paused) return stay(phase);
      return {
        phase: { kind: 'reading', paused: !event.active },
        effects: [{ kind: event.active ? 'resumeReader' : 'pauseReader' }],
      };
    case 'endReached':
      return {
        phase: { kind: 'draining', endedAt: event.now, announced: false },
        effects: [{ kind: 'stopReader' }, { kind: 'learnChildren', children: event.children }],
      };
    case 'release':
      return release(phase, event);
    case 'flush':
      return { phase, effects: [{ kind: 'writeCheckpoint', final: false }] };
    default:
      return stay(phase);
  }
}

function release(phase: ShardPhase, event: Extract<ShardEvent, { kind: 'release' }>): Step {
  return {
    phase: { kind: 'releasing', deadline: event.deadline, reason: event.reason },
    effects: [...stopIfReading(phase), { kind: 'dropBuffer' }],
  };
}

function draining(phase: Extract<ShardPhase, { kind: 'draining' }>, event: ShardEvent): Step {
  switch (event.kind) {
    case 'release':
      return release(phase, event);
    case 'flush':
      return { phase, effects: [{ kind: 'writeCheckpoint', final: false }] };
    case 'endAnnounceFailed':
      return stay({ ...phase, announced: false });
    case 'tick': {
      const effects: ShardEffect[] = [];
      let next = phase;
      if (event.announceEnd && event.buffered === 0 && !phase.announced) {
        next = { ...phase, announced: true };
        effects.push({ kind: 'markEnded' });
      }
      if ((phase.retryAt ?? 0) > event.now || event.buffered > 0 || event.inFlight > 0) return { phase: next, effects };
      effects.push({ kind: 'writeShardEnd', endedAt: phase.endedAt });
      return { phase: { kind: 'closing', step: 'shardEnd', endedAt: phase.endedAt }, effects };
    }
    default:
      return stay(phase);
  }
}

function releasing(phase: Extract<ShardPhase, { kind: 'releasing' }>, event: ShardEvent): Step {
  if (event.kind === 'flush') return { phase, effects: [{ kind: 'writeCheckpoint', final: false }] };
  if (event.kind !== 'tick' || (phase.retryAt ?? 0) > event.now) return stay(phase);
  if (event.inFlight > 0 && event.now < phase.deadline) return stay(phase);
  return {
    phase: { kind: 'closing', step: 'checkpoint', reason: phase.reason },
    effects: [{ kind: 'writeCheckpoint', final: true }],
  };
}

function closing(phase: Extract<ShardPhase, { kind: 'closing' }>, event: ShardEvent): Step {
  if (phase.step === 'shardEnd') {
    if (event.kind === 'shardEndWritten')
      return {
        phase: { kind: 'gone' },
        effects: [{ kind: 'letGo', how: 'finished', endedAt: phase.endedAt }, { kind: 'changed' }],
      };
    if (event.kind === 'shardEndRefused') return deleteLease();
    if (event.kind === 'writeFailed')
      return stay({ kind: 'draining', endedAt: phase.endedAt, announced: false, retryAt: event.now + WRITE_RETRY_MS });
  } else if (phase.step === 'checkpoint') {
    if (event.kind === 'checkpointWritten') return deleteLease();
    // The lease is still ours: its failed records may still be re-emitted while the write is retried.
    if (event.kind === 'writeFailed')
      return stay({
        kind: 'releasing',
        deadline: event.now,
        reason: phase.reason,
        retryAt: event.now + WRITE_RETRY_MS,
      });
  } else {
    if (event.kind === 'leaseDeleted')
      return {
        phase: { kind: 'gone' },
        effects: [{ kind: 'letGo', how: 'released' }, { kind: 'changed' }],
      };
    if (event.kind === 'writeFailed') return stay({ kind: 'givingBack', retryAt: event.now + WRITE_RETRY_MS });
  }
  return stay(phase);
}
