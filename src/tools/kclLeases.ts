/**
 * Pure: a KCL lease table's items (1.x, 2.x, 3.x) as positions of this spout, and this spout's positions as
 * KCL lease items, read and written as KCL's DynamoDBLeaseSerializer does:
 *   leaseKey (S)                    the shard id; multi-stream: `<account>:<stream>:<creationEpoch>:<shardId>`
 *   leaseOwner (S), leaseCounter (N) the holder and the counter it bumps at each renewal
 *   checkpoint (S)                  a sequence number, or TRIM_HORIZON | LATEST | AT_TIMESTAMP | SHARD_END
 *   checkpointSubSequenceNumber (N) the KPL user record within `checkpoint` (0 for a plain record)
 *   parentShardId (SS), childShardId (SS), ownerSwitchesSinceCheckpoint (N), pendingCheckpoint (S) ...
 *   KCL 3 adds throughputKBps, checkpointOwner, isMarkedForLeaseSteal, startingHashKey, endingHashKey: read as
 *   they come, none of them changes a position.
 * KCL resumes a sequence checkpoint AT_SEQUENCE_NUMBER and drops every user record at or below
 * (checkpoint, checkpointSubSequenceNumber): "done through that user record". This spout's `AFTER seq` is
 * "done through the whole record seq", its `AFTER seq sub` "done through user record sub of aggregate seq";
 * which one a KCL checkpoint is depends on the record (plain, or an aggregate and how many user records):
 * the caller reads it (`RecordShape`).
 */
import type { Position } from '../core/position';
import type { Item } from '../kinesis/kclLeaseTable';

export type { Item };

export type KclCheckpoint =
  | { kind: 'SEQUENCE'; sequenceNumber: string; subSequence: number }
  | { kind: 'TRIM_HORIZON' | 'LATEST' | 'AT_TIMESTAMP' | 'SHARD_END' };

export interface KclLease {
  leaseKey: string;
  shardId: string;
  /** Multi-stream leases: `<account>:<stream>:<creationEpoch>`. */
  streamIdentifier?: { account: string; stream: string; creationEpoch: number };
  owner?: string;
  counter: string;
  checkpoint: KclCheckpoint;
  parents: string[];
}

const SENTINELS = new Set(['TRIM_HORIZON', 'LATEST', 'AT_TIMESTAMP', 'SHARD_END']);

/** Parses a multi-stream lease key; undefined for a single-stream one (the shard id alone). */
export function parseLeaseKey(key: string): (KclLease['streamIdentifier'] & { shardId: string }) | undefined {
  const m = /^(\d+):([A-Za-z0-9_.-]+):(\d+):(.+)$/.exec(key);
  if (!m) return undefined;
  return { account: m[1], stream: m[2], creationEpoch: Number(m[3]), shardId: m[4] };
}

/** One item as KCL wrote it; throws with what is wrong (a hand-written or foreign item). */
export function parseLease(item: Item): KclLease {
  const key = item.leaseKey?.S;
  if (!key) throw new Error(`no leaseKey (S) in ${JSON.stringify(item).slice(0, 120)}`);
  const multi = parseLeaseKey(key);
  const seq = item.checkpoint?.S;
  let checkpoint: KclCheckpoint;
  if (seq === undefined) throw new Error(`${key}: no checkpoint (S)`);
  if (SENTINELS.has(seq)) checkpoint = { kind: seq as 'TRIM_HORIZON' };
  else if (/^\d+$/.test(seq)) {
    const subText = item.checkpointSubSequenceNumber?.N ?? '0';
    const sub = Number(subText);
    if (!Number.isSafeInteger(sub) || sub < 0)
      throw new Error(`${key}: checkpointSubSequenceNumber ${JSON.stringify(subText)} is not a whole number`);
    checkpoint = { kind: 'SEQUENCE', sequenceNumber: seq.replace(/^0+(?=\d)/, ''), subSequence: sub };
  } else
    throw new Error(
      `${key}: checkpoint ${JSON.stringify(seq)} is neither a sequence number nor one of ${[...SENTINELS].join(', ')}`,
    );
  const lease: KclLease = {
    leaseKey: key,
    shardId: multi?.shardId ?? key,
    counter: item.leaseCounter?.N ?? '0',
    checkpoint,
    parents: [...(item.parentShardId?.SS ?? [])].sort(),
  };
  if (multi)
    lease.streamIdentifier = { account: multi.account, stream: multi.stream, creationEpoch: multi.creationEpoch };
  if (item.leaseOwner?.S) lease.owner = item.leaseOwner.S;
  return lease;
}

/**
 * The leases of one stream: every single-stream lease, or the multi-stream leases of `stream` whose creation
 * epoch is the stream's (a stream deleted and re-created under its name has other shards).
 */
export function leasesOfStream(
  leases: readonly KclLease[],
  stream: string,
  createdMs: number,
): { leases: KclLease[]; others: string[] } {
  const single = leases.filter((l) => !l.streamIdentifier);
  const multi = leases.filter((l) => l.streamIdentifier);
  if (multi.length === 0) return { leases: single, others: [] };
  const epoch = Math.floor(createdMs / 1000);
  const mine = multi.filter(
    (l) => l.streamIdentifier!.stream === stream && l.streamIdentifier!.creationEpoch === epoch,
  );
  const others = [
    ...new Set(
      multi
        .filter((l) => !mine.includes(l))
        .map((l) => `${l.streamIdentifier!.stream}:${l.streamIdentifier!.creationEpoch}`),
    ),
  ].sort();
  return { leases: [...single, ...mine], others };
}

/** Leases whose counter moved between two reads spaced by KCL's failover time: held by a live worker. */
export function liveLeases(first: readonly KclLease[], second: readonly KclLease[]): KclLease[] {
  const before = new Map(first.map((l) => [l.leaseKey, l.counter]));
  return second.filter((l) => l.owner !== undefined && before.has(l.leaseKey) && before.get(l.leaseKey) !== l.counter);
}

/** The record a checkpoint names: plain, or a KPL aggregate of `userRecords`; undefined when it cannot be read (trimmed). */
export type RecordShape = { userRecords: number } | undefined;

/**
 * A KCL checkpoint as this spout's; `shape` is the record at a sequence checkpoint. AT_TIMESTAMP takes KCL's
 * configured timestamp (not in the table); LATEST becomes "at `nowMs`", where KCL started again now would.
 */
export function spoutPosition(
  checkpoint: KclCheckpoint,
  shape: RecordShape,
  at: { timestampMs: number | undefined; nowMs: number },
): Position | { error: string } {
  switch (checkpoint.kind) {
    case 'TRIM_HORIZON':
      return { kind: 'TRIM_HORIZON' };
    case 'SHARD_END':
      return { kind: 'SHARD_END' };
    case 'LATEST':
      return { kind: 'AT_TIMESTAMP', timestampMs: at.nowMs };
    case 'AT_TIMESTAMP':
      return at.timestampMs === undefined
        ? {
            error:
              "AT_TIMESTAMP: the timestamp is in KCL's configuration, not its table; give it as --source-timestamp",
          }
        : { kind: 'AT_TIMESTAMP', timestampMs: at.timestampMs };
    case 'SEQUENCE': {
      const { sequenceNumber, subSequence } = checkpoint;
      // Done through the last user record (or the plain record itself): the whole record is done.
      if (shape === undefined)
        return subSequence === 0 ? { kind: 'AFTER', sequenceNumber } : { kind: 'AFTER', sequenceNumber, subSequence };
      return subSequence >= shape.userRecords - 1
        ? { kind: 'AFTER', sequenceNumber }
        : { kind: 'AFTER', sequenceNumber, subSequence };
    }
  }
}

export function describeKcl(checkpoint: KclCheckpoint): string {
  return checkpoint.kind === 'SEQUENCE'
    ? `KCL checkpoint ${checkpoint.sequenceNumber} sub ${checkpoint.subSequence}`
    : `KCL checkpoint ${checkpoint.kind}`;
}

/**
 * This spout's position as KCL's checkpoint. `shape`: the record at an `AFTER seq` (KCL re-reads it, and
 * needs the last user record's number to skip an aggregate whole). AT_TIMESTAMP: KCL keeps only the sentinel
 * and takes the time from its configuration, which the caller must then tell the operator.
 */
export function kclCheckpoint(position: Position, shape: RecordShape): KclCheckpoint {
  switch (position.kind) {
    case 'AFTER':
      return {
        kind: 'SEQUENCE',
        sequenceNumber: position.sequenceNumber,
        subSequence: position.subSequence ?? Math.max(0, (shape?.userRecords ?? 1) - 1),
      };
    case 'AT_TIMESTAMP':
      return { kind: 'AT_TIMESTAMP' };
    default:
      return { kind: position.kind };
  }
}

/** A lease item as KCL creates one for a shard (no owner, counter 0), with the hash range KCL 2.3+ records. */
export function leaseItem(
  leaseKey: string,
  checkpoint: KclCheckpoint,
  shard: { parents: readonly string[]; children?: readonly string[]; hashRange?: { start: bigint; end: bigint } },
): Item {
  const item: Item = {
    leaseKey: { S: leaseKey },
    leaseCounter: { N: '0' },
    ownerSwitchesSinceCheckpoint: { N: '0' },
    checkpoint: { S: checkpoint.kind === 'SEQUENCE' ? checkpoint.sequenceNumber : checkpoint.kind },
    checkpointSubSequenceNumber: { N: String(checkpoint.kind === 'SEQUENCE' ? checkpoint.subSequence : 0) },
  };
  // DynamoDB refuses an empty set: KCL leaves the attribute out.
  if (shard.parents.length > 0) item.parentShardId = { SS: [...shard.parents] };
  if (shard.children && shard.children.length > 0) item.childShardId = { SS: [...shard.children] };
  if (shard.hashRange) {
    item.startingHashKey = { S: shard.hashRange.start.toString() };
    item.endingHashKey = { S: shard.hashRange.end.toString() };
  }
  const multi = parseLeaseKey(leaseKey);
  if (multi) {
    item.streamName = { S: `${multi.account}:${multi.stream}:${multi.creationEpoch}` };
    item.shardId = { S: multi.shardId };
  }
  return item;
}

/** True when an existing item already holds what an export writes (re-running it is harmless). */
export function sameCheckpoint(item: Item, checkpoint: KclCheckpoint): boolean {
  const want = leaseItem('x', checkpoint, { parents: [] });
  return (
    item.checkpoint?.S === want.checkpoint.S &&
    (item.checkpointSubSequenceNumber?.N ?? '0') === want.checkpointSubSequenceNumber.N
  );
}
