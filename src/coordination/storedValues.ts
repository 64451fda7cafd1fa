/**
 * What the layout's nodes hold: each value as JSON with a format version `v` and the release that wrote it,
 * written and read back with checks. The rule across releases (docs/zookeeper.md, "Formats across
 * releases"): a release may add optional fields without changing `v` (readers ignore fields they do not
 * know, and take a missing one as unknown); a change an older reader must not ignore raises `v`, written only
 * when the value needs it; a reader never guesses at a `v` it does not know: it refuses that node, naming
 * both formats and both releases.
 */
import { isPosition, type Position } from '../core/position';
import { RELEASE } from '../core/release';
import { ErrorCode, SpoutError } from '../errors';
import type { ShardLoad } from '../core/load';

export interface Checkpoint {
  position: Position;
  /** ZooKeeper node version, for compare-and-set. */
  version: number;
}

export interface MemberInfo {
  taskIndex: number;
  host: string;
  pid: number;
}

/**
 * What a member says of its topology (docs/operations.md, "Deploying a new version"): optional fields of the
 * member node, absent in nodes of releases before them (such a member counts as reading, of a topology of
 * its own). `topology` is Storm's topology id (`storm.id`), `active` false once Storm deactivated the task,
 * `standby` true once the task handed its leases over to another topology (kept across a reactivation
 * until that topology is gone).
 */
export interface MemberPresence {
  topology?: string;
  active: boolean;
  standby: boolean;
}

/**
 * Version 1: a position without a sub-sequence. Version 2: `position.subSequence` too (stopped inside a KPL
 * aggregate). A position that needs no sub-sequence is still written as version 1, so a spout that knows only
 * version 1 reads it; one that stops inside an aggregate is version 2, which such a spout refuses loudly
 * (it would skip the rest of the aggregate: a loss) instead of misreading.
 */
interface StoredCheckpoint {
  v: 1 | 2;
  position: Position;
  owner: string;
  updatedAt: string;
  /** The release that wrote it (absent before the rule was written). */
  release?: string;
}

/** A checkpoint with who wrote it and when, as the operator tools show it. */
export interface CheckpointRecord extends Checkpoint {
  /** Member id (or tool) that wrote it last. */
  writer?: string;
  /** Wall-clock time of that write (ISO-8601), when the node says. */
  updatedAt?: string;
}

/** A live member as its node describes it. */
export interface MemberRecord extends Partial<MemberInfo>, Partial<MemberPresence> {
  memberId: string;
  since?: string;
}

export const encode = (value: object): Buffer => Buffer.from(JSON.stringify(value));

export function decode<T extends { v: number }>(path: string, data: Buffer, versions: readonly number[] = [1]): T {
  let value: T;
  try {
    value = JSON.parse(data.toString('utf8')) as T;
  } catch (err) {
    throw new SpoutError(ErrorCode.CorruptState, `ZooKeeper node ${path} holds no JSON: remove it or fix it by hand`, {
      cause: err,
    });
  }
  if (!versions.includes(value?.v)) {
    const expected = versions.map((v) => `{"v":${v},...}`).join(' or ');
    const writer = (value as { release?: unknown } | null)?.release;
    const fix =
      typeof writer === 'string' && typeof value?.v === 'number' && value.v > Math.max(...versions)
        ? `, written by ${writer}; this is ${RELEASE}, which reads only the versions expected: run ${writer} or a newer release here (nothing is read from the node until then)`
        : ': remove it or fix it by hand';
    throw new SpoutError(
      ErrorCode.CorruptState,
      `ZooKeeper node ${path} has unsupported version ${JSON.stringify(value?.v)} (expected ${expected})${fix}`,
    );
  }
  return value;
}

const CHECKPOINT_VERSIONS = [1, 2] as const;

/** A checkpoint node's content: the position, who wrote it, when. */
export function checkpointValue(position: Position, owner: string): Buffer {
  const v = position.kind === 'AFTER' && position.subSequence !== undefined ? 2 : 1;
  const stored: StoredCheckpoint = { v, position, owner, updatedAt: new Date().toISOString(), release: RELEASE };
  return encode(stored);
}

/** A checkpoint node read back; a position that is none (or needs version 2 under version 1) is corrupt state. */
export function checkpointRecordOf(path: string, node: { data: Buffer; version: number }): CheckpointRecord {
  const { v, position, owner, updatedAt } = decode<StoredCheckpoint>(path, node.data, CHECKPOINT_VERSIONS);
  if (!isPosition(position) || (v === 1 && position.kind === 'AFTER' && position.subSequence !== undefined))
    throw new SpoutError(
      ErrorCode.CorruptState,
      `ZooKeeper node ${path} holds no valid position (${JSON.stringify(position)}): remove it or fix it by hand`,
    );
  return {
    position,
    version: node.version,
    writer: typeof owner === 'string' ? owner : undefined,
    updatedAt: typeof updatedAt === 'string' ? updatedAt : undefined,
  };
}

/**
 * A lease node's content: who holds it, since when, and (balance "throughput") the shard's smoothed load as
 * its holder measured it. Still version 1: a reader that knows no `load` reads the owner as before, and a
 * lease without one (written by such a spout, or not measured yet) reads as load unknown.
 */
export function leaseValue(owner: string, load?: ShardLoad): Buffer {
  return encode({ v: 1, owner, acquiredAt: new Date().toISOString(), release: RELEASE, ...(load && { load }) });
}

/** A lease node's load, if it holds a valid one (anything else reads as unknown, never as an error). */
export function leaseLoadOf(data: Buffer): ShardLoad | undefined {
  let load: unknown;
  try {
    load = (JSON.parse(data.toString('utf8')) as { load?: unknown })?.load;
  } catch {
    return undefined;
  }
  if (typeof load !== 'object' || load === null) return undefined;
  const { bytesPerSec, recordsPerSec } = load as Partial<ShardLoad>;
  const valid = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;
  return valid(bytesPerSec) && valid(recordsPerSec) ? { bytesPerSec, recordsPerSec } : undefined;
}

/** The owner a lease node names; throws SpoutError (CorruptState) when it names none. */
export function leaseOwnerOf(path: string, data: Buffer): string {
  const owner = decode<{ v: 1; owner: string }>(path, data).owner;
  if (typeof owner !== 'string')
    throw new SpoutError(ErrorCode.CorruptState, `ZooKeeper node ${path} names no owner: remove it or fix it by hand`);
  return owner;
}

/**
 * Lease holders by shard id, from lease nodes as read (undefined: gone). A node that cannot be read maps to
 * `unreadable` and is handed to `onCorrupt`: one bad node affects only its shard.
 */
export function leaseOwners(
  nodes: Iterable<readonly [string, { data: Buffer } | undefined]>,
  pathOf: (shardId: string) => string,
  unreadable: string,
  onCorrupt?: (err: SpoutError) => void,
): Map<string, string> {
  const owners = new Map<string, string>();
  for (const [shardId, node] of nodes) {
    if (!node) continue;
    try {
      owners.set(shardId, leaseOwnerOf(pathOf(shardId), node.data));
    } catch (err) {
      if (!(err instanceof SpoutError)) throw err;
      onCorrupt?.(err);
      owners.set(shardId, unreadable);
    }
  }
  return owners;
}

/** A finished marker's content: when, and the shard's last sequence number when known. */
export function finishedValue(lastSequenceNumber?: string): Buffer {
  return encode({ v: 1, finishedAt: new Date().toISOString(), lastSequenceNumber, release: RELEASE });
}

/** An ended marker's content: when every record of the shard was emitted. */
export function endedValue(): Buffer {
  return encode({ v: 1, endedAt: new Date().toISOString(), release: RELEASE });
}

/** A member node's content: the task, host and pid, its topology and state, and since when. */
export function memberValue(info: MemberInfo & Partial<MemberPresence>, since = new Date().toISOString()): Buffer {
  return encode({ v: 1, ...info, since, release: RELEASE });
}

/** What a member node says; fields of the wrong type are left out. Throws SpoutError when it is no member value. */
export function memberRecordOf(memberId: string, path: string, data: Buffer): MemberRecord {
  const value = decode<{ v: 1 } & Partial<MemberInfo & MemberPresence> & { since?: string }>(path, data);
  const { taskIndex, host, pid, since, topology, active, standby } = value;
  return {
    memberId,
    taskIndex: typeof taskIndex === 'number' ? taskIndex : undefined,
    host: typeof host === 'string' ? host : undefined,
    pid: typeof pid === 'number' ? pid : undefined,
    since: typeof since === 'string' ? since : undefined,
    topology: typeof topology === 'string' ? topology : undefined,
    active: typeof active === 'boolean' ? active : undefined,
    standby: typeof standby === 'boolean' ? standby : undefined,
  };
}

/** What the `holders` node says: written by `writer` (the first member), how many readable shards each member leases. */
export interface HolderCounts {
  writer: string;
  counts: ReadonlyMap<string, number>;
  /** Wall-clock ms of the write (0 when the node does not say). */
  writtenAt: number;
}

/**
 * The `holders` node's content: the lease count of each member, as the first member counted it from the lease
 * nodes, so that the other members need not read every lease node to share the shards.
 */
export function holderCountsValue(writer: string, counts: ReadonlyMap<string, number>): Buffer {
  return encode({
    v: 1,
    writer,
    counts: Object.fromEntries(counts),
    writtenAt: new Date().toISOString(),
    release: RELEASE,
  });
}

/** The `holders` node's counts; throws SpoutError (CorruptState) when it holds none. */
export function holderCountsOf(path: string, data: Buffer): HolderCounts {
  const { writer, counts, writtenAt } = decode<{ v: 1; writer?: unknown; counts?: unknown; writtenAt?: unknown }>(
    path,
    data,
  );
  const valid =
    typeof writer === 'string' &&
    typeof counts === 'object' &&
    counts !== null &&
    Object.values(counts).every((n) => Number.isSafeInteger(n) && (n as number) >= 0);
  if (!valid)
    throw new SpoutError(
      ErrorCode.CorruptState,
      `ZooKeeper node ${path} holds no lease counts: remove it (it is rewritten)`,
    );
  const at = typeof writtenAt === 'string' ? Date.parse(writtenAt) : Number.NaN;
  return {
    writer,
    counts: new Map(Object.entries(counts as Record<string, number>)),
    writtenAt: Number.isFinite(at) ? at : 0,
  };
}
