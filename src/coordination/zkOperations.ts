/**
 * The ZooKeeper operations (zooKeeper.ts) over node-zookeeper-client, each one request through the session's
 * bounded exchange (zk.ts), with the ACL each node gets and children watches armed once per path.
 */
import zookeeper from 'node-zookeeper-client';
import type { Scheduler } from '../core/scheduler';
import { ErrorCode, SpoutError } from '../errors';
import { digestId } from './acl';
import { Code, unexpected } from './zkErrors';
import type { Kind, Reply } from './zkRequests';
import type { AclEntry, NodeData, TxOp, ZooKeeperOptions } from './zooKeeper';

/** The ACLs a created node gets (`aclFor`). */
const anyone = new zookeeper.Id('world', 'anyone');
/** The session's own authenticated identities (ZooKeeper's `auth` scheme): the creator. */
const creator = new zookeeper.Id('auth', '');
const Acl = {
  open: [new zookeeper.ACL(zookeeper.Permission.ALL, anyone)],
  creatorOnly: [new zookeeper.ACL(zookeeper.Permission.ALL, creator)],
  /**
   * The root several applications share: others may add their own application below it (CREATE), and
   * nothing more; not even list the applications.
   */
  root: [new zookeeper.ACL(zookeeper.Permission.CREATE, anyone), new zookeeper.ACL(zookeeper.Permission.ALL, creator)],
  /** The root's parents, not this application's: readable and extendable by anyone, changed only by their creator. */
  shared: [
    new zookeeper.ACL(zookeeper.Permission.READ | zookeeper.Permission.CREATE, anyone),
    new zookeeper.ACL(zookeeper.Permission.ALL, creator),
  ],
};

/** A session's operations, over the one request the session provides: bounded, and credited to its trust. */
export abstract class ZkOperations {
  /** Paths with a children watch set and not fired yet: the client adds a listener per call, so arm once. */
  private readonly childWatches = new Map<string, Set<() => void>>();
  /** The same for data watches. */
  private readonly dataWatches = new Map<string, Set<() => void>>();
  readonly creatorOnly: { below: string; digestId: string } | undefined;

  protected constructor(
    protected readonly client: zookeeper.Client,
    protected readonly scheduler: Scheduler,
    { auth, creatorOnlyBelow }: Pick<ZooKeeperOptions, 'auth' | 'creatorOnlyBelow'>,
  ) {
    if (auth && creatorOnlyBelow !== undefined)
      this.creatorOnly = { below: creatorOnlyBelow.replace(/\/+$/, ''), digestId: digestId(auth.payload) };
  }

  protected abstract get requestTimeoutMs(): number;

  /** Sends one request, settled within `timeoutMs` with the code of a server's answer (zkRequests.ts). */
  protected abstract exchangeWith<R>(
    what: string,
    kind: Kind,
    send: (reply: Reply<R>) => void,
    timeoutMs?: number,
  ): Promise<{ code: number; result?: R }>;

  protected exchange<R>(
    what: string,
    kind: Kind,
    send: (reply: Reply<R>) => void,
    timeoutMs?: number,
  ): Promise<number> {
    return this.exchangeWith<R>(what, kind, send, timeoutMs).then((o) => o.code);
  }

  /** The ACL a node created at `path` gets (see ZooKeeperOptions.creatorOnlyBelow). */
  aclFor(path: string): zookeeper.ACL[] {
    const protection = this.creatorOnly;
    if (!protection) return Acl.open;
    if (path.startsWith(`${protection.below}/`)) return Acl.creatorOnly;
    return path === protection.below ? Acl.root : Acl.shared;
  }

  async getACL(path: string): Promise<AclEntry[] | undefined> {
    return (await this.getVersionedACL(path))?.acl;
  }

  async getVersionedACL(path: string): Promise<{ acl: AclEntry[]; aclVersion: number } | undefined> {
    const { code, result } = await this.exchangeWith<{ acls: zookeeper.ACL[]; stat: zookeeper.Stat }>(
      `getACL ${path}`,
      'read',
      (reply) => this.client.getACL(path, (err, acls, stat) => reply(err, { acls, stat })),
    );
    if (code !== Code.OK || !result?.acls) return undefined;
    // The client's type definitions say `perms`; its ACL objects have `permission`.
    const acl = result.acls.map((entry) => ({
      scheme: entry.id.scheme,
      id: entry.id.id,
      perms: (entry as unknown as { permission: number }).permission,
    }));
    return { acl, aclVersion: result.stat.aversion };
  }

  async create(
    path: string,
    data: Buffer,
    mode: 'persistent' | 'ephemeral',
    timeoutMs?: number,
  ): Promise<'created' | 'exists'> {
    const createMode = mode === 'ephemeral' ? zookeeper.CreateMode.EPHEMERAL : zookeeper.CreateMode.PERSISTENT;
    const code = await this.exchange<string>(
      `create ${path}`,
      'write',
      (reply) => this.client.create(path, data, this.aclFor(path), createMode, reply),
      timeoutMs,
    );
    if (code === Code.OK) return 'created';
    if (code === Code.NODE_EXISTS) return 'exists';
    throw unexpected(code, `create ${path}`);
  }

  /** Creates `path` and its missing parents, one create each; the whole settles within one request bound. */
  async mkdirp(path: string): Promise<void> {
    const deadline = this.scheduler.now() + this.requestTimeoutMs;
    let prefix = '';
    for (const part of path.split('/').filter((p) => p.length > 0)) {
      prefix += `/${part}`;
      const left = deadline - this.scheduler.now();
      if (left <= 0)
        throw new SpoutError(
          ErrorCode.ZooKeeper,
          `ZooKeeper mkdirp ${path}: no reply within ${this.requestTimeoutMs} ms`,
          { retriable: true },
        );
      await this.create(prefix, Buffer.alloc(0), 'persistent', left);
    }
  }

  async getData(path: string, watch?: () => void): Promise<NodeData | undefined> {
    const arm = watch !== undefined && this.pend(this.dataWatches, path, watch);
    let outcome: { code: number; result?: { data: Buffer; stat: zookeeper.Stat } };
    try {
      outcome = await this.exchangeWith<{ data: Buffer; stat: zookeeper.Stat }>(`getData ${path}`, 'read', (reply) => {
        const callback = (err: unknown, data: Buffer, stat: zookeeper.Stat) => reply(err, { data, stat });
        if (arm) this.client.getData(path, () => this.fire(this.dataWatches, path), callback);
        else this.client.getData(path, callback);
      });
    } catch (err) {
      if (arm) this.dataWatches.delete(path);
      throw err;
    }
    const { code, result } = outcome;
    if (code !== Code.OK || !result) {
      // No node, no watch: ZooKeeper sets none on a node that does not exist.
      if (arm) this.dataWatches.delete(path);
      return undefined;
    }
    return {
      data: result.data ?? Buffer.alloc(0),
      version: result.stat.version,
      ephemeralOwner: result.stat.ephemeralOwner.toString('hex'),
    };
  }

  /** Adds `watch` to the path's pending ones; true when none was pending (this request must arm the client's). */
  private pend(watches: Map<string, Set<() => void>>, path: string, watch: () => void): boolean {
    const pending = watches.get(path);
    if (pending) {
      pending.add(watch);
      return false;
    }
    watches.set(path, new Set([watch]));
    return true;
  }

  /** The client's watch on `path` fired: every callback pending on it is called once. */
  private fire(watches: Map<string, Set<() => void>>, path: string): void {
    const pending = watches.get(path) ?? new Set();
    watches.delete(path);
    for (const w of pending) w();
  }

  /** Returns the new version, or 'conflict' when the version did not match or the node is gone. */
  async setData(path: string, data: Buffer, version: number): Promise<number | 'conflict'> {
    const { code, result } = await this.exchangeWith<zookeeper.Stat>(`setData ${path}`, 'write', (reply) =>
      this.client.setData(path, data, version, reply),
    );
    if (code === Code.OK && result) return result.version;
    if (code === Code.BAD_VERSION || code === Code.NO_NODE) return 'conflict';
    throw unexpected(code, `setData ${path}`);
  }

  /** Children of `path`, [] when it does not exist. `watch` is called once, at the next change. */
  async getChildren(path: string, watch?: () => void): Promise<string[]> {
    const arm = watch !== undefined && this.pend(this.childWatches, path, watch);
    try {
      const { code, result } = await this.exchangeWith<string[]>(`getChildren ${path}`, 'read', (reply) => {
        const callback = (err: unknown, children: string[]) => reply(err, children);
        if (arm) this.client.getChildren(path, () => this.fire(this.childWatches, path), callback);
        else this.client.getChildren(path, callback);
      });
      if (code === Code.OK && result) return result;
      // No node, no watch (ZooKeeper sets none on a node that does not exist).
      if (arm) this.childWatches.delete(path);
      return [];
    } catch (err) {
      // Not armed after all: the next call arms again (a late reply may still arm the client's watcher,
      // which then only fires the watchers pending at that time: early, never lost).
      if (arm) this.childWatches.delete(path);
      throw err;
    }
  }

  /** Removes one node at `version` (-1: any); false when it was already gone or had another version. */
  async remove(path: string, version: number): Promise<boolean> {
    const code = await this.exchange<void>(`remove ${path}`, 'write', (reply) =>
      this.client.remove(path, version, reply),
    );
    if (code === Code.OK) return true;
    if (code === Code.NO_NODE || code === Code.BAD_VERSION) return false;
    throw unexpected(code, `remove ${path}`);
  }

  /** Removes `path` and everything below it (the client's own removeRecursive fails below depth 1). */
  async removeTree(path: string): Promise<void> {
    for (const child of await this.getChildren(path)) await this.removeTree(`${path}/${child}`);
    await this.remove(path, -1);
  }

  /** Atomic multi-op; resolves false when a check/version failed (nothing was applied). */
  async transaction(ops: TxOp[]): Promise<boolean> {
    const code = await this.exchange<unknown>('transaction', 'write', (reply) => {
      const tx = this.client.transaction();
      for (const op of ops) {
        if (op.op === 'create')
          tx.create(
            op.path,
            op.data,
            this.aclFor(op.path),
            op.ephemeral ? zookeeper.CreateMode.EPHEMERAL : zookeeper.CreateMode.PERSISTENT,
          );
        else if (op.op === 'set') tx.setData(op.path, op.data, op.version);
        else if (op.op === 'check') tx.check(op.path, op.version);
        else tx.remove(op.path, op.version);
      }
      tx.commit(reply);
    });
    if (code === Code.OK) return true;
    if (code === Code.BAD_VERSION || code === Code.NO_NODE || code === Code.NODE_EXISTS) return false;
    throw unexpected(code, 'transaction');
  }
}
