/**
 * An in-memory ZooKeeper ensemble as its clients see it: a tree of nodes (data, version, ephemeral owner),
 * sessions that expire when nothing was heard from them for their timeout (their ephemeral nodes then
 * go), one-shot data and child watches, atomic multi-op transactions, and a history of past states so a
 * read can be answered as a follower behind the leader would answer it.
 */
import type { TxOp } from '../../../src/coordination/zooKeeper';
import type { Owner, SimLoop } from '../virtualTime';

/** ZooKeeper's error codes, as node-zookeeper-client numbers them. */
export const ZkCode = {
  ConnectionLoss: -4,
  NoNode: -101,
  BadVersion: -103,
  NoChildrenForEphemerals: -108,
  NodeExists: -110,
  NotEmpty: -111,
  SessionExpired: -112,
} as const;
export type ZkCode = (typeof ZkCode)[keyof typeof ZkCode];

export interface ZNode {
  data: Buffer;
  version: number;
  /** Session id (hex) of an ephemeral node's owner; '0' for persistent nodes. */
  ephemeralOwner: string;
}

/** One applied change to one node, for observers (the invariant checker). */
export interface NodeChange {
  zxid: number;
  path: string;
  before: ZNode | undefined;
  after: ZNode | undefined;
  /** Session that made the change; undefined when the server did (an expired session's ephemerals). */
  by: string | undefined;
}

export type Request =
  | { op: 'ping' }
  | { op: 'create'; path: string; data: Buffer; ephemeral: boolean }
  | { op: 'mkdirp'; path: string }
  | { op: 'getData'; path: string; watch: boolean }
  | { op: 'getChildren'; path: string; watch: boolean }
  | { op: 'setData'; path: string; data: Buffer; version: number }
  | { op: 'remove'; path: string; version: number }
  | { op: 'multi'; ops: TxOp[] }
  | { op: 'close' };

export type Reply = { ok: true; value: unknown; zxid: number } | { ok: false; code: ZkCode; zxid: number };

/** What the server calls on a session's client: watch events and the end of the session. */
export interface SessionPeer {
  watchFired(kind: 'data' | 'child', path: string): void;
  /** The server expired the session (no contact for its timeout): the connection is closed on the client. */
  expired(): void;
}

interface Session {
  id: string;
  timeoutMs: number;
  lastContact: number;
  alive: boolean;
  peer: SessionPeer;
  cancelExpiry: () => void;
}

interface Version {
  zxid: number;
  node: ZNode | undefined;
}

const HISTORY_MS = 3_000;

function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

function childName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export class ZkServer {
  private readonly nodes = new Map<string, ZNode>([['/', { data: Buffer.alloc(0), version: 0, ephemeralOwner: '0' }]]);
  private readonly children = new Map<string, Set<string>>([['/', new Set()]]);
  /** Every path's past states, newest last, trimmed to the last HISTORY_MS (the latest state always kept). */
  private readonly history = new Map<string, Version[]>();
  private readonly commits: { zxid: number; at: number }[] = [{ zxid: 0, at: 0 }];
  private readonly sessions = new Map<string, Session>();
  private readonly dataWatches = new Map<string, Set<string>>();
  private readonly childWatches = new Map<string, Set<string>>();
  private nextSession = 0x1000;
  zxid = 0;
  /** Requests applied (pings and closes left out), by op and by the folder of the path: what the ensemble serves. */
  readonly requests = new Map<string, number>();
  readonly observers: ((change: NodeChange) => void)[] = [];
  /** Called for every node a session read (a getData that found it, once its reply reached the client), with what it got. */
  readonly readers: ((path: string, sessionId: string, data: Buffer) => void)[] = [];

  /** A getData reply reached its client: only then has the process seen what the node held (maybe a follower's older data). */
  delivered(path: string, sessionId: string, data: Buffer): void {
    for (const read of this.readers) read(path, sessionId, data);
  }

  constructor(
    private readonly loop: SimLoop,
    readonly owner: Owner,
    private readonly log: (what: string) => void,
  ) {}

  // ---- sessions

  openSession(timeoutMs: number, peer: SessionPeer): string {
    const id = (this.nextSession++).toString(16).padStart(16, '0');
    const session: Session = {
      id,
      timeoutMs,
      lastContact: this.loop.now,
      alive: true,
      peer,
      cancelExpiry: () => undefined,
    };
    this.sessions.set(id, session);
    this.armExpiry(session);
    this.log(`session ${id} opened (timeout ${timeoutMs} ms)`);
    return id;
  }

  isAlive(sessionId: string): boolean {
    return this.sessions.get(sessionId)?.alive === true;
  }

  /** The server heard from the session (a request or a ping arrived): its timeout starts again. */
  touch(sessionId: string): boolean {
    const session = this.sessions.get(sessionId);
    if (!session?.alive) return false;
    session.lastContact = this.loop.now;
    return true;
  }

  private armExpiry(session: Session): void {
    session.cancelExpiry = this.loop.at(this.owner, session.lastContact + session.timeoutMs, () => {
      if (!session.alive) return;
      if (this.loop.now < session.lastContact + session.timeoutMs) return this.armExpiry(session);
      this.log(`session ${session.id} expired (nothing heard for ${this.loop.now - session.lastContact} ms)`);
      this.endSession(session);
      session.peer.expired();
    });
  }

  /** Closed by its client or expired: its ephemeral nodes are deleted, its watches dropped. */
  private endSession(session: Session): void {
    session.alive = false;
    session.cancelExpiry();
    for (const watches of [this.dataWatches, this.childWatches])
      for (const set of watches.values()) set.delete(session.id);
    const owned = [...this.nodes.entries()]
      .filter(([, node]) => node.ephemeralOwner === session.id)
      .map(([path]) => path);
    if (owned.length === 0) return;
    this.zxid += 1;
    this.commits.push({ zxid: this.zxid, at: this.loop.now });
    const fired = new Fired();
    for (const path of owned) this.deleteNode(path, undefined, fired);
    this.fire(fired);
  }

  // ---- requests

  /**
   * Applies one request of a session now. `readAt` answers a read from that older state (a follower
   * behind the leader). The reply carries the zxid the answer reflects.
   */
  apply(sessionId: string, request: Request, readAt?: number): Reply {
    const session = this.sessions.get(sessionId);
    if (!session?.alive) return { ok: false, code: ZkCode.SessionExpired, zxid: this.zxid };
    session.lastContact = this.loop.now;
    if (request.op !== 'ping' && request.op !== 'close') {
      const folder =
        request.op === 'multi'
          ? 'multi'
          : `${request.op} ${(request.op === 'getChildren' ? request.path : parentOf(request.path)).split('/').pop()}`;
      this.requests.set(folder, (this.requests.get(folder) ?? 0) + 1);
    }
    switch (request.op) {
      case 'ping':
        return { ok: true, value: undefined, zxid: this.zxid };
      case 'close':
        this.log(`session ${sessionId} closed by its client`);
        this.endSession(session);
        return { ok: true, value: undefined, zxid: this.zxid };
      case 'getData':
        return this.getData(session, request.path, request.watch, readAt);
      case 'getChildren':
        return this.getChildren(session, request.path, request.watch, readAt);
      case 'mkdirp':
        return this.mutate(session, [], (fired) => {
          const parts = request.path.split('/').filter(Boolean);
          for (let i = 1; i <= parts.length; i += 1) {
            const path = `/${parts.slice(0, i).join('/')}`;
            if (!this.nodes.has(path)) this.createNode(path, Buffer.alloc(0), '0', session.id, fired);
          }
        });
      case 'create':
        return this.mutate(session, [
          { op: 'create', path: request.path, data: request.data, ephemeral: request.ephemeral },
        ]);
      case 'setData':
        return this.mutate(
          session,
          [{ op: 'set', path: request.path, data: request.data, version: request.version }],
          undefined,
          (value) => value,
        );
      case 'remove':
        return this.mutate(session, [{ op: 'remove', path: request.path, version: request.version }]);
      case 'multi':
        return this.mutate(session, request.ops);
    }
  }

  /** Checks every op first, then applies them all (or none): one zxid, watches fired after. */
  private mutate(
    session: Session,
    ops: TxOp[],
    extra?: (fired: Fired) => void,
    result?: (lastVersion: number) => unknown,
  ): Reply {
    const failure = this.check(ops);
    if (failure !== undefined) return { ok: false, code: failure, zxid: this.zxid };
    this.zxid += 1;
    this.commits.push({ zxid: this.zxid, at: this.loop.now });
    this.trimHistory();
    const fired = new Fired();
    let lastVersion = 0;
    for (const op of ops) {
      if (op.op === 'create') this.createNode(op.path, op.data, op.ephemeral ? session.id : '0', session.id, fired);
      else if (op.op === 'set') lastVersion = this.setNode(op.path, op.data, session.id, fired);
      else if (op.op === 'remove') this.deleteNode(op.path, session.id, fired);
    }
    extra?.(fired);
    this.fire(fired);
    return { ok: true, value: result ? result(lastVersion) : undefined, zxid: this.zxid };
  }

  /** Validates a transaction against the state as each earlier op of it would leave it. */
  private check(ops: TxOp[]): ZkCode | undefined {
    const exists = new Map<string, boolean>();
    const versions = new Map<string, number>();
    const childCount = new Map<string, number>();
    const has = (path: string) => exists.get(path) ?? this.nodes.has(path);
    const version = (path: string) => versions.get(path) ?? this.nodes.get(path)?.version ?? -1;
    const kids = (path: string) => childCount.get(path) ?? this.children.get(path)?.size ?? 0;
    for (const op of ops) {
      switch (op.op) {
        case 'create': {
          const parent = parentOf(op.path);
          if (has(op.path)) return ZkCode.NodeExists;
          if (!has(parent)) return ZkCode.NoNode;
          if ((this.nodes.get(parent)?.ephemeralOwner ?? '0') !== '0') return ZkCode.NoChildrenForEphemerals;
          exists.set(op.path, true);
          versions.set(op.path, 0);
          childCount.set(parent, kids(parent) + 1);
          break;
        }
        case 'set':
        case 'check':
          if (!has(op.path)) return ZkCode.NoNode;
          if (op.version !== -1 && op.version !== version(op.path)) return ZkCode.BadVersion;
          if (op.op === 'set') versions.set(op.path, version(op.path) + 1);
          break;
        case 'remove':
          if (!has(op.path)) return ZkCode.NoNode;
          if (op.version !== -1 && op.version !== version(op.path)) return ZkCode.BadVersion;
          if (kids(op.path) > 0) return ZkCode.NotEmpty;
          exists.set(op.path, false);
          childCount.set(parentOf(op.path), kids(parentOf(op.path)) - 1);
          break;
      }
    }
    return undefined;
  }

  private createNode(path: string, data: Buffer, ephemeralOwner: string, by: string, fired: Fired): void {
    const node: ZNode = { data: Buffer.from(data), version: 0, ephemeralOwner };
    this.nodes.set(path, node);
    this.children.set(path, new Set());
    this.children.get(parentOf(path))!.add(childName(path));
    this.record(path, undefined, node, by);
    fired.data.add(path);
    fired.child.add(parentOf(path));
  }

  private setNode(path: string, data: Buffer, by: string, fired: Fired): number {
    const before = this.nodes.get(path)!;
    const after: ZNode = {
      data: Buffer.from(data),
      version: before.version + 1,
      ephemeralOwner: before.ephemeralOwner,
    };
    this.nodes.set(path, after);
    this.record(path, before, after, by);
    fired.data.add(path);
    return after.version;
  }

  private deleteNode(path: string, by: string | undefined, fired: Fired): void {
    const before = this.nodes.get(path);
    if (!before) return;
    this.nodes.delete(path);
    this.children.delete(path);
    this.children.get(parentOf(path))?.delete(childName(path));
    this.record(path, before, undefined, by);
    fired.data.add(path);
    fired.child.add(path);
    fired.child.add(parentOf(path));
  }

  private record(path: string, before: ZNode | undefined, after: ZNode | undefined, by: string | undefined): void {
    let versions = this.history.get(path);
    if (!versions) {
      versions = before ? [{ zxid: 0, node: before }] : [];
      this.history.set(path, versions);
    }
    versions.push({ zxid: this.zxid, node: after });
    for (const observe of this.observers) observe({ zxid: this.zxid, path, before, after, by });
  }

  private trimHistory(): void {
    const horizon = this.oldestReadable();
    if (this.commits.length < 64) return;
    const keepFrom = this.commits.findIndex((c) => c.zxid >= horizon);
    if (keepFrom > 0) this.commits.splice(0, keepFrom);
    for (const [path, versions] of this.history) {
      // Keep the newest version at or before the horizon: reads at the horizon need it.
      let cut = 0;
      while (cut + 1 < versions.length && versions[cut + 1].zxid <= horizon) cut += 1;
      if (cut > 0) versions.splice(0, cut);
      if (versions.length === 1 && versions[0].node === undefined && !this.nodes.has(path)) this.history.delete(path);
    }
  }

  /** The oldest state a follower may still answer from: what was committed HISTORY_MS ago. */
  oldestReadable(): number {
    const since = this.loop.now - HISTORY_MS;
    let zxid = this.commits[0]?.zxid ?? 0;
    for (const commit of this.commits) {
      if (commit.at > since) break;
      zxid = commit.zxid;
    }
    return zxid;
  }

  private nodeAt(path: string, zxid: number | undefined): ZNode | undefined {
    if (zxid === undefined || zxid >= this.zxid) return this.nodes.get(path);
    const versions = this.history.get(path);
    if (!versions) return this.nodes.get(path);
    let found: ZNode | undefined;
    for (const v of versions) {
      if (v.zxid > zxid) break;
      found = v.node;
    }
    return found;
  }

  private childrenAt(path: string, zxid: number | undefined): string[] | undefined {
    if (zxid === undefined || zxid >= this.zxid) {
      const kids = this.children.get(path);
      return kids && [...kids].sort();
    }
    if (!this.nodeAt(path, zxid)) return undefined;
    const prefix = path === '/' ? '/' : `${path}/`;
    const names = new Set<string>();
    for (const candidate of new Set([...this.history.keys(), ...this.nodes.keys()])) {
      if (
        candidate.startsWith(prefix) &&
        !candidate.slice(prefix.length).includes('/') &&
        candidate !== path &&
        this.nodeAt(candidate, zxid)
      )
        names.add(childName(candidate));
    }
    return [...names].sort();
  }

  private getData(session: Session, path: string, watch: boolean, readAt: number | undefined): Reply {
    const zxid = readAt ?? this.zxid;
    const node = this.nodeAt(path, readAt);
    if (!node) return { ok: false, code: ZkCode.NoNode, zxid };
    if (watch) {
      this.watch(this.dataWatches, path, session.id);
      // A follower behind the leader sees the newer change soon after and fires the watch then.
      if (readAt !== undefined && this.nodes.get(path) !== node)
        this.loop.after(this.owner, 1, () => this.fire(Fired.of('data', path)));
    }
    return {
      ok: true,
      value: { data: Buffer.from(node.data), version: node.version, ephemeralOwner: node.ephemeralOwner },
      zxid,
    };
  }

  private getChildren(session: Session, path: string, watch: boolean, readAt: number | undefined): Reply {
    const zxid = readAt ?? this.zxid;
    const names = this.childrenAt(path, readAt);
    if (!names) return { ok: false, code: ZkCode.NoNode, zxid };
    if (watch) {
      this.watch(this.childWatches, path, session.id);
      const now = this.childrenAt(path, undefined) ?? [];
      if (readAt !== undefined && now.join('/') !== names.join('/'))
        this.loop.after(this.owner, 1, () => this.fire(Fired.of('child', path)));
    }
    return { ok: true, value: names, zxid };
  }

  private watch(watches: Map<string, Set<string>>, path: string, sessionId: string): void {
    let set = watches.get(path);
    if (!set) watches.set(path, (set = new Set()));
    set.add(sessionId);
  }

  private fire(fired: Fired): void {
    for (const [kind, paths, watches] of [
      ['data', fired.data, this.dataWatches],
      ['child', fired.child, this.childWatches],
    ] as const) {
      for (const path of paths) {
        const sessions = watches.get(path);
        if (!sessions) continue;
        watches.delete(path);
        for (const id of sessions) {
          const session = this.sessions.get(id);
          if (session?.alive) session.peer.watchFired(kind, path);
        }
      }
    }
  }

  // ---- what the invariant checker reads (the truth, not a client's view)

  node(path: string): ZNode | undefined {
    return this.nodes.get(path);
  }

  childrenOf(path: string): string[] {
    return [...(this.children.get(path) ?? [])].sort();
  }
}

/** Paths whose data and child watches a change fires. */
class Fired {
  readonly data = new Set<string>();
  readonly child = new Set<string>();

  static of(kind: 'data' | 'child', path: string): Fired {
    const fired = new Fired();
    fired[kind].add(path);
    return fired;
  }
}
