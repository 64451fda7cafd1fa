/** Where a shard is read from, and the application's bootstrap record that decides it for new shards. */
export type InitialPosition = 'LATEST' | 'TRIM_HORIZON' | { atTimestamp: string };

export type Position =
  | { kind: 'TRIM_HORIZON' }
  | { kind: 'AT_TIMESTAMP'; timestampMs: number }
  /**
   * After the record `sequenceNumber`; with `subSequence`, inside it: that KPL aggregate's user records up to
   * and including `subSequence` are done, the rest of it is not (re-read at the record, the done ones skipped).
   */
  | { kind: 'AFTER'; sequenceNumber: string; subSequence?: number }
  | { kind: 'SHARD_END' };

/** Written once, by the first task of the application that starts; every later decision reads it. */
export interface Bootstrap {
  v: 1;
  firstStartMs: number;
  initialPosition: InitialPosition;
  streamArn: string;
  streamCreatedMs: number;
  /** Shards listed at the first start, and which of them were open then. */
  shardsAtStart: string[];
  openAtStart: string[];
}

/**
 * The start of a shard that has no checkpoint yet, as the bootstrap record decides it. Shards born after
 * the first start begin at TRIM_HORIZON whatever the initial position; the initial position applies to
 * shards open at the first start; shards already closed then are read from the same point (LATEST:
 * nothing left to read, so SHARD_END).
 */
export function startPositions(bootstrap: Bootstrap): (shardId: string) => Position {
  const openAtStart = new Set(bootstrap.openAtStart);
  const knownAtStart = new Set(bootstrap.shardsAtStart);
  const initial = bootstrap.initialPosition;
  return (shardId) => {
    if (!knownAtStart.has(shardId) || initial === 'TRIM_HORIZON') return { kind: 'TRIM_HORIZON' };
    if (initial === 'LATEST')
      return openAtStart.has(shardId)
        ? { kind: 'AT_TIMESTAMP', timestampMs: bootstrap.firstStartMs }
        : { kind: 'SHARD_END' };
    return { kind: 'AT_TIMESTAMP', timestampMs: Date.parse(initial.atTimestamp) };
  };
}

/** True for a well-formed stored position (ZooKeeper data may have been written by hand). */
export function isPosition(value: unknown): value is Position {
  const p = value as Partial<Record<string, unknown>> | null;
  switch (typeof p === 'object' && p !== null ? p.kind : undefined) {
    case 'TRIM_HORIZON':
    case 'SHARD_END':
      return true;
    case 'AT_TIMESTAMP':
      return Number.isFinite(p!.timestampMs);
    case 'AFTER':
      return (
        typeof p!.sequenceNumber === 'string' &&
        /^\d+$/.test(p!.sequenceNumber) &&
        (p!.subSequence === undefined || (Number.isSafeInteger(p!.subSequence) && (p!.subSequence as number) >= 0))
      );
    default:
      return false;
  }
}

export function compareSequence(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders points inside a shard: by sequence number, then sub-sequence; a whole record (no sub-sequence) after all of its user records. */
export function compareAfter(
  a: { sequenceNumber: string; subSequence?: number },
  b: { sequenceNumber: string; subSequence?: number },
): number {
  const bySequence = compareSequence(a.sequenceNumber, b.sequenceNumber);
  if (bySequence !== 0) return bySequence;
  const subA = a.subSequence ?? Infinity;
  const subB = b.subSequence ?? Infinity;
  return subA === subB ? 0 : subA < subB ? -1 : 1;
}

/** True when `next` is strictly past `current`: the only checkpoint worth writing (never backwards, never the same). */
export function isAhead(next: Position, current: Position): boolean {
  if (!isNotBehind(next, current)) return false;
  if (next.kind !== current.kind) return true;
  return next.kind === 'AFTER' && current.kind === 'AFTER' ? compareAfter(next, current) !== 0 : false;
}

/** True when `next` is at or past `current` (checkpoints never move backwards). */
export function isNotBehind(next: Position, current: Position): boolean {
  if (current.kind === 'SHARD_END') return next.kind === 'SHARD_END';
  if (next.kind === 'SHARD_END') return true;
  if (current.kind === 'AFTER') return next.kind === 'AFTER' && compareAfter(next, current) >= 0;
  return true;
}

export function describePosition(position: Position): string {
  switch (position.kind) {
    case 'AFTER':
      return position.subSequence === undefined
        ? `after ${position.sequenceNumber}`
        : `after user record ${position.subSequence} of ${position.sequenceNumber}`;
    case 'AT_TIMESTAMP':
      return `at ${new Date(position.timestampMs).toISOString()}`;
    default:
      return position.kind;
  }
}
