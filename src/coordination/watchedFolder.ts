/**
 * One folder of the layout (leases/, finished/, members/, ended/) kept in memory and in step with ZooKeeper
 * by watches, so that an assignment round reads what changed, not every node of the stream.
 *
 * - Its children are read with a children watch; when the watch fires, the next `view` reads them again
 *   (one request) and, with `withData`, the nodes of the new children (one request each).
 * - With `withData`, each child's node is read with a data watch: it fires when the node is changed or
 *   deleted (a lease deleted and created again by another task between two reads of the children keeps
 *   its name, not its owner), and the next `view` reads that node again.
 * - A read that fails leaves what it was to read marked: its watch may not be armed, so it is read (and the
 *   watch armed) again at the next `view`. `resync` marks everything, for what a watch may have missed: a
 *   connection lost and found again, a periodic check.
 * Each `view` call registers a callback called once, at the next change, as ZooKeeper's watches are.
 */
import type { NodeData, ZooKeeper } from './zooKeeper';

/** A getChildren reply's size as ZooKeeper encodes it: reply header, vector length, each name with its length. */
export function listingReplyBytes(names: readonly string[]): number {
  return 16 + 4 + names.reduce((sum, name) => sum + 4 + Buffer.byteLength(name), 0);
}

/**
 * Node reads in flight at once for one folder: enough to hide the round trip (the first member reads every
 * new lease node, 8,192 in a doubling of 4,096 shards: 32 at a time, 3.2 s in the simulation, 256 at a time,
 * 1.1 s), few enough not to flood the server (ZooKeeper's `globalOutstandingLimit` is 1,000 by default).
 */
export const FOLDER_READS_AT_ONCE = 256;

export class WatchedFolder {
  private readonly entries = new Map<string, NodeData | undefined>();
  private childrenStale = true;
  private readonly staleData = new Set<string>();
  private readonly listeners = new Set<() => void>();
  private syncing: Promise<void> | undefined;
  /** One callback per path (the client keeps each distinct one until its watch fires). */
  private readonly dataWatches = new Map<string, () => void>();
  private readonly onChildren = () => {
    this.childrenStale = true;
    this.changed();
  };

  constructor(
    private readonly zk: Pick<ZooKeeper, 'getChildren' | 'getData'>,
    readonly path: string,
    /** Keep each child's node (its data), not only its name. */
    private withData: boolean,
  ) {}

  /**
   * Keeps each child's node from now on (every node is read at the next view), or the names alone (the
   * nodes kept are left as they are, no longer read again).
   */
  readData(on: boolean): void {
    if (on === this.withData) return;
    this.withData = on;
    if (on) for (const id of this.entries.keys()) this.staleData.add(id);
    else this.staleData.clear();
  }

  /** Everything is read again at the next view, as if nothing were known. */
  resync(): void {
    this.childrenStale = true;
    if (this.withData) for (const id of this.entries.keys()) this.staleData.add(id);
  }

  /** Nothing is marked to be read again. */
  get inStep(): boolean {
    return !this.childrenStale && this.staleData.size === 0;
  }

  /**
   * The children (with their nodes, `withData`), read from the server only where a watch said they changed.
   * `watch` is called once, at the next change after this call. Rejects when a read fails.
   */
  async view(watch?: () => void): Promise<ReadonlyMap<string, NodeData | undefined>> {
    if (watch) this.listeners.add(watch);
    if (!this.inStep) {
      this.syncing ??= this.sync().finally(() => {
        this.syncing = undefined;
      });
      await this.syncing;
    }
    return this.entries;
  }

  private changed(): void {
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) listener();
  }

  private async sync(): Promise<void> {
    if (this.childrenStale) {
      // Cleared before the read: a watch that fires while it is out marks it again.
      this.childrenStale = false;
      let children: string[];
      try {
        children = await this.zk.getChildren(this.path, this.onChildren);
      } catch (err) {
        this.childrenStale = true;
        throw err;
      }
      const now = new Set(children);
      for (const id of this.entries.keys())
        if (!now.has(id)) {
          this.entries.delete(id);
          this.staleData.delete(id);
        }
      for (const id of children)
        if (!this.entries.has(id)) {
          if (this.withData) this.staleData.add(id);
          else this.entries.set(id, undefined);
        }
    }
    if (!this.withData) return;
    const ids = [...this.staleData];
    let failure: unknown;
    let next = 0;
    // FOLDER_READS_AT_ONCE readers, each taking the next node as soon as its read is answered.
    const reader = async () => {
      while (next < ids.length) {
        const id = ids[next];
        next += 1;
        this.staleData.delete(id);
        try {
          const node = await this.zk.getData(`${this.path}/${id}`, this.dataWatchOf(id));
          // Gone: the children watch has fired (or will) and says so too.
          if (node) this.entries.set(id, node);
          else {
            this.entries.delete(id);
            this.dataWatches.delete(id);
          }
        } catch (err) {
          this.staleData.add(id);
          failure ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(FOLDER_READS_AT_ONCE, ids.length) }, reader));
    if (failure !== undefined) throw failure;
  }

  private dataWatchOf(id: string): () => void {
    let watch = this.dataWatches.get(id);
    if (!watch) {
      watch = () => {
        this.dataWatches.delete(id);
        this.staleData.add(id);
        this.changed();
      };
      this.dataWatches.set(id, watch);
    }
    return watch;
  }
}

/** One node kept in memory and in step by its data watch: read again only after it changed (or `resync`). */
export class WatchedNode {
  private node: NodeData | undefined;
  private stale = true;
  private readonly listeners = new Set<() => void>();
  private readonly onChange = () => {
    this.stale = true;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) listener();
  };

  constructor(
    private readonly zk: Pick<ZooKeeper, 'getData'>,
    readonly path: string,
  ) {}

  resync(): void {
    this.stale = true;
  }

  /** The node (undefined: there is none); `watch` is called once, at its next change. Rejects when a read fails. */
  async view(watch?: () => void): Promise<NodeData | undefined> {
    if (watch) this.listeners.add(watch);
    if (this.stale) {
      this.stale = false;
      try {
        this.node = await this.zk.getData(this.path, this.onChange);
        // ZooKeeper arms no watch on a node that does not exist: read it again next time.
        if (!this.node) this.stale = true;
      } catch (err) {
        this.stale = true;
        throw err;
      }
    }
    return this.node;
  }
}

/** The folders an assignment round reads, watched. */
export interface WatchedFolders {
  leases: WatchedFolder;
  finished: WatchedFolder;
  members: WatchedFolder;
  ended: WatchedFolder;
}

/**
 * The watched folders of the layout at `base`: leases with their nodes (the owner), members with theirs (the
 * topology and whether it is active), the others by name.
 */
export function watchedFolders(zk: Pick<ZooKeeper, 'getChildren' | 'getData'>, base: string): WatchedFolders {
  return {
    leases: new WatchedFolder(zk, `${base}/leases`, true),
    finished: new WatchedFolder(zk, `${base}/finished`, false),
    members: new WatchedFolder(zk, `${base}/members`, true),
    ended: new WatchedFolder(zk, `${base}/ended`, false),
  };
}
