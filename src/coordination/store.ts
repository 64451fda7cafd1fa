/**
 * The ZooKeeper layout, under `<root>/<applicationName>/<streamName>/`:
 *   bootstrap              persistent  first start time, initial position, stream identity, shards at start
 *   checkpoints/<shardId>  persistent  where the shard resumes: {position}; SHARD_END once read and acked;
 *                                      v 2 when the position stops inside a KPL aggregate (a subSequence)
 *   finished/<shardId>     persistent  marker created with SHARD_END, watched so every task learns at once
 *   ended/<shardId>        persistent  every record emitted (only with ordering "parents-emitted"), watched
 *   leases/<shardId>       ephemeral   who reads the shard now: {owner}
 *   members/<memberId>     ephemeral   the live spout tasks
 * Every stored value is JSON with a version field `v`.
 */
import { ErrorCode, SpoutError } from '../errors';
import { isPosition, type Bootstrap, type Position } from '../core/position';
import type { ZooKeeper } from './zooKeeper';

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
}

const encode = (value: object): Buffer => Buffer.from(JSON.stringify(value));

function decode<T extends { v: number }>(path: string, data: Buffer, versions: readonly number[] = [1]): T {
  let value: T;
  try {
    value = JSON.parse(data.toString('utf8')) as T;
  } catch (err) {
    throw new SpoutError(ErrorCode.CorruptState, `ZooKeeper node ${path} holds no JSON: remove it or fix it by hand`, { cause: err });
  }
  if (!versions.includes(value?.v)) {
    const expected = versions.map((v) => `{"v":${v},...}`).join(' or ');
    throw new SpoutError(ErrorCode.CorruptState, `ZooKeeper node ${path} has unsupported version ${JSON.stringify(value?.v)} (expected ${expected}): remove it or fix it by hand`);
  }
  return value;
}

const CHECKPOINT_VERSIONS = [1, 2] as const;

/** A lease node nobody can read: its shard is held by no one we know, and nobody takes it while the node is there. */
export const UNREADABLE_LEASE = '(unreadable)';

const KINDS = ['checkpoints', 'finished', 'ended', 'leases', 'members'] as const;

export function basePath(root: string, applicationName: string, streamName: string): string {
  return `${root.replace(/\/+$/, '')}/${applicationName}/${streamName}`;
}

export class CoordinationStore {
  constructor(
    private readonly zk: ZooKeeper,
    readonly base: string,
    readonly memberId: string,
  ) {}

  private path(kind: (typeof KINDS)[number], id: string): string {
    return `${this.base}/${kind}/${id}`;
  }

  async ensureLayout(): Promise<void> {
    for (const kind of KINDS) await this.zk.mkdirp(`${this.base}/${kind}`);
  }

  /** Creates the bootstrap record if none exists (exactly one start wins) and returns the stored one. */
  async bootstrap(candidate: Bootstrap): Promise<Bootstrap> {
    const path = `${this.base}/bootstrap`;
    await this.zk.create(path, encode(candidate), 'persistent');
    const stored = await this.zk.getData(path);
    if (!stored) throw new SpoutError(ErrorCode.ZooKeeper, `${path} vanished right after it was created`, { retriable: true });
    return decode<Bootstrap>(path, stored.data);
  }

  async readCheckpoint(shardId: string): Promise<Checkpoint | undefined> {
    const path = this.path('checkpoints', shardId);
    const node = await this.zk.getData(path);
    if (!node) return undefined;
    const { v, position } = decode<StoredCheckpoint>(path, node.data, CHECKPOINT_VERSIONS);
    if (!isPosition(position) || (v === 1 && position.kind === 'AFTER' && position.subSequence !== undefined)) throw new SpoutError(ErrorCode.CorruptState, `ZooKeeper node ${path} holds no valid position (${JSON.stringify(position)}): remove it or fix it by hand`);
    return { position, version: node.version };
  }

  /** The shard's checkpoint; when it has none, `start` is written as its first one (before any emit). */
  async checkpointOrStart(shardId: string, start: Position): Promise<Checkpoint> {
    await this.zk.create(this.path('checkpoints', shardId), encode(this.stored(start)), 'persistent');
    const checkpoint = await this.readCheckpoint(shardId);
    if (!checkpoint) throw new SpoutError(ErrorCode.ZooKeeper, `checkpoint of ${shardId} vanished right after it was created`, { retriable: true });
    return checkpoint;
  }

  /** Compare-and-set; 'conflict' when someone else wrote since `version` (re-read before deciding). */
  async writeCheckpoint(shardId: string, position: Position, version: number): Promise<Checkpoint | 'conflict'> {
    const result = await this.zk.setData(this.path('checkpoints', shardId), encode(this.stored(position)), version);
    return result === 'conflict' ? result : { position, version: result };
  }

  /** Atomically: checkpoint SHARD_END, the finished marker, and the lease released. */
  async finishShard(shardId: string, checkpointVersion: number, lastSequenceNumber: string | undefined): Promise<boolean> {
    return this.zk.transaction([
      { op: 'set', path: this.path('checkpoints', shardId), data: encode(this.stored({ kind: 'SHARD_END' })), version: checkpointVersion },
      { op: 'create', path: this.path('finished', shardId), data: encode({ v: 1, finishedAt: new Date().toISOString(), lastSequenceNumber }) },
      { op: 'remove', path: this.path('leases', shardId), version: 0 },
    ]);
  }

  async finishedShards(watch?: () => void): Promise<Set<string>> {
    return new Set(await this.zk.getChildren(`${this.base}/finished`, watch));
  }

  /** Marks a closed shard as fully emitted (its records may still be in flight). */
  async markEnded(shardId: string): Promise<void> {
    await this.zk.create(this.path('ended', shardId), encode({ v: 1, endedAt: new Date().toISOString() }), 'persistent');
  }

  async endedShards(watch?: () => void): Promise<Set<string>> {
    return new Set(await this.zk.getChildren(`${this.base}/ended`, watch));
  }

  /** Every shard with a checkpoint, finished or ended marker (to find those the stream no longer has). */
  async recordedShards(): Promise<Set<string>> {
    const lists = await Promise.all((['checkpoints', 'finished', 'ended'] as const).map((kind) => this.zk.getChildren(`${this.base}/${kind}`)));
    return new Set(lists.flat());
  }

  /** Removes what is stored about a shard that expired from the stream. */
  async forgetShard(shardId: string): Promise<void> {
    for (const kind of ['ended', 'finished', 'checkpoints'] as const) await this.zk.remove(this.path(kind, shardId), -1);
  }

  /** Creating the ephemeral node is taking the lease; false when another task holds it. */
  async acquireLease(shardId: string): Promise<boolean> {
    const created = await this.zk.create(this.path('leases', shardId), encode({ v: 1, owner: this.memberId, acquiredAt: new Date().toISOString() }), 'ephemeral');
    return created === 'created';
  }

  /** Deletes the lease only when this session owns it. */
  async releaseLease(shardId: string): Promise<void> {
    const path = this.path('leases', shardId);
    const node = await this.zk.getData(path);
    if (node && node.ephemeralOwner === this.zk.sessionId) await this.zk.remove(path, node.version);
  }

  /**
   * Lease holders by shard id. A node that cannot be read maps to UNREADABLE_LEASE and is handed to
   * `onCorrupt`: one bad node affects only its shard.
   */
  async leases(watch?: () => void, onCorrupt?: (err: SpoutError) => void): Promise<Map<string, string>> {
    const shards = await this.zk.getChildren(`${this.base}/leases`, watch);
    const owners = await Promise.all(
      shards.map(async (shardId) => {
        const path = this.path('leases', shardId);
        const node = await this.zk.getData(path);
        if (!node) return undefined;
        try {
          const owner = decode<{ v: 1; owner: string }>(path, node.data).owner;
          if (typeof owner !== 'string') throw new SpoutError(ErrorCode.CorruptState, `ZooKeeper node ${path} names no owner: remove it or fix it by hand`);
          return [shardId, owner] as const;
        } catch (err) {
          if (!(err instanceof SpoutError)) throw err;
          onCorrupt?.(err);
          return [shardId, UNREADABLE_LEASE] as const;
        }
      }),
    );
    return new Map(owners.filter((entry): entry is readonly [string, string] => entry !== undefined));
  }

  /** Shards with a lease node, whoever holds it. */
  async leasedShards(): Promise<Set<string>> {
    return new Set(await this.zk.getChildren(`${this.base}/leases`));
  }

  async registerMember(info: MemberInfo): Promise<void> {
    await this.zk.create(this.path('members', this.memberId), encode({ v: 1, ...info, since: new Date().toISOString() }), 'ephemeral');
  }

  async leaveMembers(): Promise<void> {
    await this.zk.remove(this.path('members', this.memberId), -1);
  }

  async members(watch?: () => void): Promise<string[]> {
    return (await this.zk.getChildren(`${this.base}/members`, watch)).sort();
  }

  private stored(position: Position): StoredCheckpoint {
    const v = position.kind === 'AFTER' && position.subSequence !== undefined ? 2 : 1;
    return { v, position, owner: this.memberId, updatedAt: new Date().toISOString() };
  }
}
