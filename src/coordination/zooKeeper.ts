/**
 * What the coordination code needs of a ZooKeeper session. The real one is `ZkSession` (zk.ts, over the
 * pure-JS client); the simulation (test/sim) hands in an in-memory one that fails when a seed says so.
 */
export type ConnectionState = 'connecting' | 'connected' | 'disconnected' | 'expired' | 'closed';

export interface NodeData {
  data: Buffer;
  version: number;
  /** Session id (hex) of an ephemeral node's owner; '0' for persistent nodes. */
  ephemeralOwner: string;
}

/** One entry of a node's ACL: who (`scheme`, `id`: world/anyone, digest/`user:hash`, ...) may do what (ZooKeeper's bits, Perm). */
export interface AclEntry {
  scheme: string;
  id: string;
  perms: number;
}

export type TxOp =
  | { op: 'create'; path: string; data: Buffer; ephemeral?: boolean }
  | { op: 'set'; path: string; data: Buffer; version: number }
  | { op: 'check'; path: string; version: number }
  | { op: 'remove'; path: string; version: number };

export interface ZooKeeper {
  readonly sessionId: string;
  readonly connectionState: ConnectionState;
  /** Session timeout the server granted (it may clamp the one asked for). */
  readonly sessionTimeoutMs: number;
  /** Until when (monotonic ms) this session's ephemeral nodes may be trusted to exist; -Infinity when not connected. */
  trustedUntil(): number;
  /**
   * With creator-only ACLs (ZooKeeperOptions.creatorOnlyBelow): that path, and the digest id (`user:hash`) of
   * the session's credentials, the only identity the nodes created below it grant anything to.
   */
  readonly creatorOnly?: { below: string; digestId: string };
  create(path: string, data: Buffer, mode: 'persistent' | 'ephemeral'): Promise<'created' | 'exists'>;
  mkdirp(path: string): Promise<void>;
  getData(path: string, watch?: () => void): Promise<NodeData | undefined>;
  /** The node's ACL, undefined when it does not exist; rejects (NO_AUTH) when these credentials may not read it. */
  getACL(path: string): Promise<AclEntry[] | undefined>;
  /**
   * The same with the node's ACL version (its Stat's `aversion`: 0 while its ACL was never changed since its
   * create). Without it, a caller must assume the ACL may have been changed.
   */
  getVersionedACL?(path: string): Promise<{ acl: AclEntry[]; aclVersion: number } | undefined>;
  /** Returns the new version, or 'conflict' when the version did not match or the node is gone. */
  setData(path: string, data: Buffer, version: number): Promise<number | 'conflict'>;
  /** Children of `path`, [] when it does not exist. `watch` is called once, at the next change. */
  getChildren(path: string, watch?: () => void): Promise<string[]>;
  /** Removes one node at `version` (-1: any); false when it was already gone or had another version. */
  remove(path: string, version: number): Promise<boolean>;
  /** Atomic multi-op; resolves false when a check/version failed (nothing was applied). */
  transaction(ops: TxOp[]): Promise<boolean>;
  close(): void;
}

export interface ZooKeeperOptions {
  connect: string;
  sessionTimeoutMs: number;
  /** Digest credentials (`user:password`) the session authenticates with; never logged. */
  auth?: { scheme: 'digest'; payload: string };
  /**
   * With `auth`: nodes created strictly below this path are readable and writable only by those
   * credentials (CREATOR_ALL_ACL); the node at this path (shared by applications with other credentials)
   * only extendable by others (CREATE), its parents readable and extendable by others. Without: every node
   * is open.
   */
  creatorOnlyBelow?: string;
  /** Every state change after the session is first connected. */
  onState?: (state: ConnectionState) => void;
}

/** Opens a session and resolves once it is connected; rejects (retriable) when it cannot within a bound. */
export type ConnectZooKeeper = (options: ZooKeeperOptions) => Promise<ZooKeeper>;
