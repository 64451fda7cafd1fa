/** How the spout and the tools open their ZooKeeper session: the same ensemble, credentials and ACLs. */
import type { ZooKeeperOptions } from './zooKeeper';

/** The configuration's `zookeeper` settings once validated (config/ fills them; this layer takes plain values). */
export interface ZooKeeperSettings {
  connect: string;
  sessionTimeoutMs: number;
  root: string;
  auth?: ZooKeeperOptions['auth'];
  /** True when nodes below `root` are created readable and writable only by `auth`. */
  creatorOnly: boolean;
}

export function zooKeeperOptions(config: { zookeeper: ZooKeeperSettings }): Omit<ZooKeeperOptions, 'onState'> {
  const { connect, sessionTimeoutMs, auth, creatorOnly, root } = config.zookeeper;
  return { connect, sessionTimeoutMs, auth, creatorOnlyBelow: creatorOnly ? root : undefined };
}
