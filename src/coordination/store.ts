/**
 * The spout's state in ZooKeeper, in the layout of layout.ts: the bootstrap record, checkpoints with versioned
 * compare-and-set, the finished and ended markers, leases, members, and an operator's reset in one transaction.
 */
import type { Bootstrap, Position } from '../core/position';
import { ErrorCode, SpoutError } from '../errors';
import { KINDS, type Kind, nodePath } from './layout';
import { ensureProtectedLayout, verifyLayoutProtection } from './layoutAcl';
import {
  type Checkpoint,
  type CheckpointRecord,
  checkpointRecordOf,
  checkpointValue,
  decode,
  encode,
  endedValue,
  finishedValue,
  type HolderCounts,
  holderCountsOf,
  holderCountsValue,
  leaseOwners,
  leaseValue,
  type MemberInfo,
  type MemberPresence,
  type MemberRecord,
  memberRecordOf,
  memberValue,
} from './storedValues';
import { type CheckpointReset, resetOps } from './resetOps';
import { type ImportedCheckpoint, importOps } from './importOps';
import { WatchedNode, type WatchedFolders, watchedFolders } from './watchedFolder';
import type { NodeData, ZooKeeper } from './zooKeeper';

export { basePath } from './layout';
export type { CheckpointReset } from './resetOps';
export type { ImportedCheckpoint } from './importOps';
export type {
  Checkpoint,
  CheckpointRecord,
  HolderCounts,
  MemberInfo,
  MemberPresence,
  MemberRecord,
} from './storedValues';

/** A lease node nobody can read: its shard is held by no one we know, and nobody takes it while the node is there. */
export const UNREADABLE_LEASE = '(unreadable)';
/** The holder of a lease node not read (leases by name): another task's, as no lease of this session is unknown here. */
export const ELSEWHERE = '(held elsewhere)';

export class CoordinationStore {
  /** The folders an assignment round watches, kept in step by their watches (watchedFolder.ts). */
  private readonly watched: WatchedFolders;
  /** This task's member node as registered, so that a change of its state keeps the rest. */
  private member: { info: MemberInfo & Partial<MemberPresence>; since: string } | undefined;

  private readonly holders: WatchedNode;
  /** Lease nodes this session created and has not removed: what `leases` names as ours without reading them. */
  private readonly own = new Set<string>();
  /** Lease nodes whose create or remove had no answer: read at the next `leases` by name to learn whose they are. */
  private readonly uncertain = new Set<string>();

  constructor(
    private readonly zk: ZooKeeper,
    readonly base: string,
    readonly memberId: string,
  ) {
    this.watched = watchedFolders(zk, base);
    this.holders = new WatchedNode(zk, `${base}/holders`);
  }

  /** The watched folders are read again in full at their next use (after a reconnect, or as a periodic check). */
  resync(): void {
    for (const folder of Object.values(this.watched)) folder.resync();
    this.holders.resync();
  }

  /** Children of a folder: with `watch`, from its watched copy (watch called once at the next change). */
  private async childrenOf(kind: keyof WatchedFolders, watch?: () => void): Promise<string[]> {
    if (!watch) return this.zk.getChildren(`${this.base}/${kind}`);
    return [...(await this.watched[kind].view(watch)).keys()];
  }

  private path(kind: Kind, id: string): string {
    return nodePath(this.base, kind, id);
  }

  /**
   * Creates what is missing of the layout. With creator-only ACLs, nothing below the root is used unless these
   * credentials alone control it (layoutAcl.ts).
   */
  async ensureLayout(): Promise<void> {
    const protection = this.zk.creatorOnly;
    if (!protection) {
      for (const kind of KINDS) await this.zk.mkdirp(`${this.base}/${kind}`);
      return;
    }
    await ensureProtectedLayout(this.zk, this.base, protection);
  }

  /**
   * With creator-only ACLs, rejects with what to do when a node of the layout (or one stored in it) is not
   * creator-only for these credentials: what the tools check before they trust anything they read.
   */
  async verifyProtection(): Promise<void> {
    await verifyLayoutProtection(this.zk, this.base);
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
    return checkpointRecordOf(path, node);
  }

  /** Shards with a checkpoint node. */
  async checkpointedShards(): Promise<Set<string>> {
    return new Set(await this.zk.getChildren(`${this.base}/checkpoints`));
  }

  /**
   * The shard's checkpoint; when it has none, `start` is written as its first one (before any emit). A create
   * that succeeded made the node with `start` at version 0: nothing to read back (one read less per new shard).
   * `leasedBefore`: the shard had a lease, so it very likely has one: read first (a refused create is a write).
   */
  async checkpointOrStart(shardId: string, start: Position, leasedBefore = false): Promise<Checkpoint> {
    if (leasedBefore) {
      const stored = await this.readCheckpoint(shardId);
      if (stored) return stored;
    }
    const created = await this.zk.create(this.path('checkpoints', shardId), this.stored(start), 'persistent');
    if (created === 'created') return { position: start, version: 0 };
    const checkpoint = await this.readCheckpoint(shardId);
    if (!checkpoint)
      throw new SpoutError(ErrorCode.ZooKeeper, `checkpoint of ${shardId} vanished right after it was created`, {
        retriable: true,
      });
    return checkpoint;
  }

  /** Compare-and-set; 'conflict' when someone else wrote since `version` (re-read before deciding). */
  async writeCheckpoint(shardId: string, position: Position, version: number): Promise<Checkpoint | 'conflict'> {
    const result = await this.zk.setData(this.path('checkpoints', shardId), this.stored(position), version);
    return result === 'conflict' ? result : { position, version: result };
  }

  /** Atomically: checkpoint SHARD_END, the finished marker, and the lease released. */
  async finishShard(
    shardId: string,
    checkpointVersion: number,
    lastSequenceNumber: string | undefined,
  ): Promise<boolean> {
    const done = await this.zk.transaction([
      {
        op: 'set',
        path: this.path('checkpoints', shardId),
        data: this.stored({ kind: 'SHARD_END' }),
        version: checkpointVersion,
      },
      {
        op: 'create',
        path: this.path('finished', shardId),
        data: finishedValue(lastSequenceNumber),
      },
      // Any version: its holder may have written the shard's load into it; the checkpoint's version guards all.
      { op: 'remove', path: this.path('leases', shardId), version: -1 },
    ]);
    if (done) this.own.delete(shardId);
    return done;
  }

  async finishedShards(watch?: () => void): Promise<Set<string>> {
    return new Set(await this.childrenOf('finished', watch));
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
    await this.zk.create(path, finishedValue(), 'persistent');
    return path;
  }

  /** Path of the shard's checkpoint node (for messages an operator acts on). */
  checkpointPath(shardId: string): string {
    return this.path('checkpoints', shardId);
  }

  /** Marks a closed shard as fully emitted (its records may still be in flight). */
  async markEnded(shardId: string): Promise<void> {
    await this.zk.create(this.path('ended', shardId), endedValue(), 'persistent');
  }

  async endedShards(watch?: () => void): Promise<Set<string>> {
    return new Set(await this.childrenOf('ended', watch));
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
    let created: 'created' | 'exists';
    try {
      created = await this.zk.create(this.path('leases', shardId), this.leaseData(), 'ephemeral');
    } catch (err) {
      this.uncertain.add(shardId);
      throw err;
    }
    if (created === 'created') this.own.add(shardId);
    return created === 'created';
  }

  /** Deletes the lease only when this session owns it. */
  async releaseLease(shardId: string): Promise<void> {
    const path = this.path('leases', shardId);
    try {
      const node = await this.zk.getData(path);
      if (node && node.ephemeralOwner === this.zk.sessionId) await this.zk.remove(path, node.version);
    } catch (err) {
      this.uncertain.add(shardId);
      throw err;
    }
    this.own.delete(shardId);
  }

  /**
   * Lease holders by shard id; with `watch`, from the watched copy of leases/ (watch called once at the next
   * change). A node that cannot be read maps to UNREADABLE_LEASE and is handed to `onCorrupt`: one bad node
   * affects only its shard.
   */
  async leases(
    watch?: () => void,
    onCorrupt?: (err: SpoutError) => void,
    byName = false,
  ): Promise<Map<string, string>> {
    if (watch) this.watched.leases.readData(!byName);
    if (watch && byName) return this.leasesByName(watch);
    let nodes: [string, NodeData | undefined][];
    if (watch) nodes = [...(await this.watched.leases.view(watch))];
    else {
      const shards = await this.zk.getChildren(`${this.base}/leases`);
      nodes = await Promise.all(
        shards.map(
          async (id) => [id, await this.zk.getData(this.path('leases', id))] as [string, NodeData | undefined],
        ),
      );
    }
    return leaseOwners(nodes, (id) => this.path('leases', id), UNREADABLE_LEASE, onCorrupt);
  }

  /**
   * Lease holders from the names alone: this session's leases (created here and not removed) are ours, every
   * other one is ELSEWHERE; a lease whose create or remove had no answer is read once to learn whose it is.
   */
  private async leasesByName(watch: () => void): Promise<Map<string, string>> {
    const names = await this.watched.leases.view(watch);
    for (const shardId of [...this.uncertain]) {
      const path = this.path('leases', shardId);
      const node = names.has(shardId) ? await this.zk.getData(path) : undefined;
      this.uncertain.delete(shardId);
      if (!node) this.own.delete(shardId);
      else if (
        node.ephemeralOwner === this.zk.sessionId ||
        leaseOwners([[shardId, node]], () => path, '').get(shardId) === this.memberId
      )
        this.own.add(shardId);
      else this.own.delete(shardId);
    }
    const owners = new Map<string, string>();
    for (const shardId of names.keys()) owners.set(shardId, this.own.has(shardId) ? this.memberId : ELSEWHERE);
    return owners;
  }

  /**
   * The lease counts the first member published (undefined: none, or unreadable); `watch` is called once, at
   * its next change.
   */
  async holderCounts(watch: () => void): Promise<HolderCounts | undefined> {
    const node = await this.holders.view(watch);
    if (!node) return undefined;
    try {
      return holderCountsOf(this.holders.path, node.data);
    } catch {
      return undefined;
    }
  }

  /** Publishes the lease count of each member (by the first member), whatever was there. */
  async writeHolderCounts(counts: ReadonlyMap<string, number>): Promise<void> {
    const data = holderCountsValue(this.memberId, counts);
    if ((await this.zk.setData(this.holders.path, data, -1)) !== 'conflict') return;
    if ((await this.zk.create(this.holders.path, data, 'persistent')) === 'exists')
      await this.zk.setData(this.holders.path, data, -1);
  }

  /** The lease nodes from the watched copy of leases/ (`watch` called once at the next change): what else they hold. */
  async leaseNodes(watch: () => void): Promise<Map<string, NodeData>> {
    const nodes = new Map<string, NodeData>();
    for (const [shardId, node] of await this.watched.leases.view(watch)) if (node) nodes.set(shardId, node);
    return nodes;
  }

  /** Shards with a lease node, whoever holds it. */
  async leasedShards(): Promise<Set<string>> {
    return new Set(await this.zk.getChildren(`${this.base}/leases`));
  }

  async registerMember(info: MemberInfo & Partial<MemberPresence>): Promise<void> {
    const since = new Date().toISOString();
    this.member = { info, since };
    await this.zk.create(this.path('members', this.memberId), memberValue(info, since), 'ephemeral');
  }

  /** Writes this task's topology state into its member node; false when the node is gone (the session ended). */
  async updateMember(presence: MemberPresence): Promise<boolean> {
    if (!this.member) return false;
    this.member.info = { ...this.member.info, ...presence };
    const path = this.path('members', this.memberId);
    return (await this.zk.setData(path, memberValue(this.member.info, this.member.since), -1)) !== 'conflict';
  }

  /**
   * Each live member's topology state, from the watched copy of members/ (`watch` called once at the next
   * change, a state change included). A node without these fields (an older release) or that cannot be read
   * counts as reading, of an unknown topology.
   */
  async memberStates(watch: () => void): Promise<Map<string, Partial<MemberPresence>>> {
    const states = new Map<string, Partial<MemberPresence>>();
    for (const [memberId, node] of await this.watched.members.view(watch)) {
      if (!node) continue;
      try {
        const { topology, active, standby } = memberRecordOf(memberId, this.path('members', memberId), node.data);
        states.set(memberId, { topology, active, standby });
      } catch (err) {
        if (!(err instanceof SpoutError)) throw err;
        states.set(memberId, {});
      }
    }
    return states;
  }

  async leaveMembers(): Promise<void> {
    await this.zk.remove(this.path('members', this.memberId), -1);
  }

  async members(watch?: () => void): Promise<string[]> {
    return (await this.childrenOf('members', watch)).sort();
  }

  /** The live members with what their nodes say (task, host, pid, since); an unreadable node gives its id alone. */
  async memberRecords(): Promise<MemberRecord[]> {
    const records = await Promise.all(
      (await this.members()).map(async (memberId): Promise<MemberRecord | undefined> => {
        const path = this.path('members', memberId);
        const node = await this.zk.getData(path);
        if (!node) return undefined;
        try {
          return memberRecordOf(memberId, path, node.data);
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
    const ops = resetOps(this.base, resets, whileNoLease, this.memberId);
    return ops.length === 0 || this.zk.transaction(ops);
  }

  /**
   * An import of another consumer's positions (importOps.ts), in one transaction: the bootstrap created when
   * there was none, and every checkpoint, or nothing. Resolves false when nothing was written.
   */
  async importCheckpoints(
    bootstrap: Bootstrap | undefined,
    checkpoints: readonly ImportedCheckpoint[],
  ): Promise<boolean> {
    const ops = importOps(this.base, bootstrap, checkpoints, this.memberId);
    return ops.length === 0 || this.zk.transaction(ops);
  }

  private leaseData(): Buffer {
    return leaseValue(this.memberId);
  }

  private stored(position: Position): Buffer {
    return checkpointValue(position, this.memberId);
  }
}
