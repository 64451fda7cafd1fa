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
import { isCreatorOnly, unprotectedNode } from './acl';
import type { TxOp, ZooKeeper } from './zooKeeper';

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

/** A checkpoint with who wrote it and when, as the operator tools show it. */
export interface CheckpointRecord extends Checkpoint {
  /** Member id (or tool) that wrote it last. */
  writer?: string;
  /** Wall-clock time of that write (ISO-8601), when the node says. */
  updatedAt?: string;
}

/** A live member as its node describes it. */
export interface MemberRecord extends Partial<MemberInfo> {
  memberId: string;
  since?: string;
}

/**
 * One shard's part of an operator's reset: its new checkpoint (created when it has none), and the
 * finished/ended markers removed when it will be read again.
 */
export interface CheckpointReset {
  shardId: string;
  position: Position;
  /** Version of the checkpoint read when planning; undefined when it had none (created). */
  checkpointVersion: number | undefined;
  removeFinished: boolean;
  removeEnded: boolean;
}

const encode = (value: object): Buffer => Buffer.from(JSON.stringify(value));

function decode<T extends { v: number }>(path: string, data: Buffer, versions: readonly number[] = [1]): T {
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
    throw new SpoutError(
      ErrorCode.CorruptState,
      `ZooKeeper node ${path} has unsupported version ${JSON.stringify(value?.v)} (expected ${expected}): remove it or fix it by hand`,
    );
  }
  return value;
}

const CHECKPOINT_VERSIONS = [1, 2] as const;

/** A lease node nobody can read: its shard is held by no one we know, and nobody takes it while the node is there. */
export const UNREADABLE_LEASE = '(unreadable)';

const KINDS = ['checkpoints', 'finished', 'ended', 'leases', 'members'] as const;

/** ACLs read at once when checking what a layout holds (a stream may have thousands of shards). */
const ACL_READS_AT_ONCE = 64;

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

  /**
   * Creates what is missing of the layout. With creator-only ACLs, nothing below the root is used unless these
   * credentials alone control it: top down, each node is created, or when it exists its ACL is read, and one
   * that is not creator-only is refused before anything is made below it; so is any node stored in the layout.
   */
  async ensureLayout(): Promise<void> {
    const protection = this.zk.creatorOnly;
    if (!protection) {
      for (const kind of KINDS) await this.zk.mkdirp(`${this.base}/${kind}`);
      return;
    }
    await this.zk.mkdirp(protection.below);
    for (const path of this.layoutNodes(protection.below)) {
      const created = await this.zk.create(path, Buffer.alloc(0), 'persistent');
      if (created === 'exists') await this.refuseUnprotected(path, protection.digestId);
    }
    // Again once all is made: a root open to others lets them replace an application node while it is empty.
    await this.verifyProtection();
  }

  /**
   * With creator-only ACLs, rejects with what to do when a node of the layout (or one stored in it) is not
   * creator-only for these credentials: what the tools check before they trust anything they read.
   */
  async verifyProtection(): Promise<void> {
    const protection = this.zk.creatorOnly;
    if (!protection) return;
    for (const path of this.layoutNodes(protection.below)) await this.refuseUnprotected(path, protection.digestId);
    await this.refuseUnprotectedStored(protection.digestId);
  }

  /** The layout's nodes strictly below the root, top down: the application's, the stream's (the base), its kinds. */
  private layoutNodes(below: string): string[] {
    const nodes: string[] = [];
    let prefix = '';
    for (const part of this.base.split('/').filter((p) => p.length > 0)) {
      prefix += `/${part}`;
      if (prefix.startsWith(`${below}/`)) nodes.push(prefix);
    }
    return [...nodes, ...KINDS.map((kind) => `${this.base}/${kind}`)];
  }

  private async refuseUnprotected(path: string, ours: string): Promise<void> {
    const acl = await this.zk.getACL(path);
    if (acl && !isCreatorOnly(acl, ours)) throw unprotectedNode(path, acl, ours);
  }

  /** The bootstrap and every node below the kinds, a bounded number of reads at a time. */
  private async refuseUnprotectedStored(ours: string): Promise<void> {
    await this.refuseUnprotected(`${this.base}/bootstrap`, ours);
    for (const kind of KINDS) {
      const children = await this.zk.getChildren(`${this.base}/${kind}`);
      for (let i = 0; i < children.length; i += ACL_READS_AT_ONCE)
        await Promise.all(
          children.slice(i, i + ACL_READS_AT_ONCE).map((id) => this.refuseUnprotected(this.path(kind, id), ours)),
        );
    }
  }

  /** Creates the bootstrap record if none exists (exactly one start wins) and returns the stored one. */
  async bootstrap(candidate: Bootstrap): Promise<Bootstrap> {
    const path = `${this.base}/bootstrap`;
    await this.zk.create(path, encode(candidate), 'persistent');
    const stored = await this.zk.getData(path);
    if (!stored)
      throw new SpoutError(ErrorCode.ZooKeeper, `${path} vanished right after it was created`, { retriable: true });
    return decode<Bootstrap>(path, stored.data);
  }

  /** The bootstrap record, or undefined when the application never started (nothing is created). */
  async readBootstrap(): Promise<Bootstrap | undefined> {
    const path = `${this.base}/bootstrap`;
    const node = await this.zk.getData(path);
    return node && decode<Bootstrap>(path, node.data);
  }

  async readCheckpoint(shardId: string): Promise<Checkpoint | undefined> {
    const record = await this.checkpointRecord(shardId);
    return record && { position: record.position, version: record.version };
  }

  /** The checkpoint with its writer and time (for the operator tools). */
  async checkpointRecord(shardId: string): Promise<CheckpointRecord | undefined> {
    const path = this.path('checkpoints', shardId);
    const node = await this.zk.getData(path);
    if (!node) return undefined;
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

  /** Shards with a checkpoint node. */
  async checkpointedShards(): Promise<Set<string>> {
    return new Set(await this.zk.getChildren(`${this.base}/checkpoints`));
  }

  /** The shard's checkpoint; when it has none, `start` is written as its first one (before any emit). */
  async checkpointOrStart(shardId: string, start: Position): Promise<Checkpoint> {
    await this.zk.create(this.path('checkpoints', shardId), encode(this.stored(start)), 'persistent');
    const checkpoint = await this.readCheckpoint(shardId);
    if (!checkpoint)
      throw new SpoutError(ErrorCode.ZooKeeper, `checkpoint of ${shardId} vanished right after it was created`, {
        retriable: true,
      });
    return checkpoint;
  }

  /** Compare-and-set; 'conflict' when someone else wrote since `version` (re-read before deciding). */
  async writeCheckpoint(shardId: string, position: Position, version: number): Promise<Checkpoint | 'conflict'> {
    const result = await this.zk.setData(this.path('checkpoints', shardId), encode(this.stored(position)), version);
    return result === 'conflict' ? result : { position, version: result };
  }

  /** Atomically: checkpoint SHARD_END, the finished marker, and the lease released. */
  async finishShard(
    shardId: string,
    checkpointVersion: number,
    lastSequenceNumber: string | undefined,
  ): Promise<boolean> {
    return this.zk.transaction([
      {
        op: 'set',
        path: this.path('checkpoints', shardId),
        data: encode(this.stored({ kind: 'SHARD_END' })),
        version: checkpointVersion,
      },
      {
        op: 'create',
        path: this.path('finished', shardId),
        data: encode({ v: 1, finishedAt: new Date().toISOString(), lastSequenceNumber }),
      },
      { op: 'remove', path: this.path('leases', shardId), version: 0 },
    ]);
  }

  async finishedShards(watch?: () => void): Promise<Set<string>> {
    return new Set(await this.zk.getChildren(`${this.base}/finished`, watch));
  }

  /** True when the shard's finished marker exists. */
  async hasFinishedMarker(shardId: string): Promise<boolean> {
    return (await this.zk.getData(this.path('finished', shardId))) !== undefined;
  }

  /**
   * Makes the finished marker of a shard whose checkpoint is SHARD_END again (lost to a hand edit, a partial
   * restore, an interrupted reset); 'exists' when it is there already. Returns the marker's path.
   */
  async restoreFinishedMarker(shardId: string): Promise<string> {
    const path = this.path('finished', shardId);
    await this.zk.create(path, encode({ v: 1, finishedAt: new Date().toISOString() }), 'persistent');
    return path;
  }

  /** Path of the shard's checkpoint node (for messages an operator acts on). */
  checkpointPath(shardId: string): string {
    return this.path('checkpoints', shardId);
  }

  /** Marks a closed shard as fully emitted (its records may still be in flight). */
  async markEnded(shardId: string): Promise<void> {
    await this.zk.create(
      this.path('ended', shardId),
      encode({ v: 1, endedAt: new Date().toISOString() }),
      'persistent',
    );
  }

  async endedShards(watch?: () => void): Promise<Set<string>> {
    return new Set(await this.zk.getChildren(`${this.base}/ended`, watch));
  }

  /** Every shard with a checkpoint, finished or ended marker (to find those the stream no longer has). */
  async recordedShards(): Promise<Set<string>> {
    const lists = await Promise.all(
      (['checkpoints', 'finished', 'ended'] as const).map((kind) => this.zk.getChildren(`${this.base}/${kind}`)),
    );
    return new Set(lists.flat());
  }

  /** Removes what is stored about a shard that expired from the stream. */
  async forgetShard(shardId: string): Promise<void> {
    for (const kind of ['ended', 'finished', 'checkpoints'] as const)
      await this.zk.remove(this.path(kind, shardId), -1);
  }

  /** Creating the ephemeral node is taking the lease; false when another task holds it. */
  async acquireLease(shardId: string): Promise<boolean> {
    const created = await this.zk.create(this.path('leases', shardId), this.leaseData(), 'ephemeral');
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
          if (typeof owner !== 'string')
            throw new SpoutError(
              ErrorCode.CorruptState,
              `ZooKeeper node ${path} names no owner: remove it or fix it by hand`,
            );
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
    await this.zk.create(
      this.path('members', this.memberId),
      encode({ v: 1, ...info, since: new Date().toISOString() }),
      'ephemeral',
    );
  }

  async leaveMembers(): Promise<void> {
    await this.zk.remove(this.path('members', this.memberId), -1);
  }

  async members(watch?: () => void): Promise<string[]> {
    return (await this.zk.getChildren(`${this.base}/members`, watch)).sort();
  }

  /** The live members with what their nodes say (task, host, pid, since); an unreadable node gives its id alone. */
  async memberRecords(): Promise<MemberRecord[]> {
    const records = await Promise.all(
      (await this.members()).map(async (memberId): Promise<MemberRecord | undefined> => {
        const path = this.path('members', memberId);
        const node = await this.zk.getData(path);
        if (!node) return undefined;
        try {
          const { taskIndex, host, pid, since } = decode<{ v: 1 } & Partial<MemberInfo> & { since?: string }>(
            path,
            node.data,
          );
          return {
            memberId,
            taskIndex: typeof taskIndex === 'number' ? taskIndex : undefined,
            host: typeof host === 'string' ? host : undefined,
            pid: typeof pid === 'number' ? pid : undefined,
            since: typeof since === 'string' ? since : undefined,
          };
        } catch (err) {
          if (!(err instanceof SpoutError)) throw err;
          return { memberId };
        }
      }),
    );
    return records.filter((r): r is MemberRecord => r !== undefined);
  }

  /**
   * An operator's reset, all shards in one transaction: nothing is written unless every checkpoint is still
   * at the version it was planned from (or still absent) and every marker to remove is still there. With
   * `whileNoLease`, each shard's lease is created and removed inside the same transaction, so it also fails
   * when any of them is held at that moment. Resolves false when nothing was written.
   */
  async resetCheckpoints(resets: readonly CheckpointReset[], whileNoLease: boolean): Promise<boolean> {
    const ops: TxOp[] = [];
    for (const reset of resets) {
      const lease = this.path('leases', reset.shardId);
      if (whileNoLease) ops.push({ op: 'create', path: lease, data: this.leaseData(), ephemeral: true });
      const checkpoint = this.path('checkpoints', reset.shardId);
      const data = encode(this.stored(reset.position));
      ops.push(
        reset.checkpointVersion === undefined
          ? { op: 'create', path: checkpoint, data }
          : { op: 'set', path: checkpoint, data, version: reset.checkpointVersion },
      );
      if (reset.removeFinished) ops.push({ op: 'remove', path: this.path('finished', reset.shardId), version: -1 });
      if (reset.removeEnded) ops.push({ op: 'remove', path: this.path('ended', reset.shardId), version: -1 });
      if (whileNoLease) ops.push({ op: 'remove', path: lease, version: 0 });
    }
    return ops.length === 0 || this.zk.transaction(ops);
  }

  /** A lease node's content: who holds it, since when. */
  private leaseData(): Buffer {
    return encode({ v: 1, owner: this.memberId, acquiredAt: new Date().toISOString() });
  }

  private stored(position: Position): StoredCheckpoint {
    const v = position.kind === 'AFTER' && position.subSequence !== undefined ? 2 : 1;
    return { v, position, owner: this.memberId, updatedAt: new Date().toISOString() };
  }
}
