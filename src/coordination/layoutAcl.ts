/** With creator-only ACLs: the layout is used only when these credentials alone control each of its nodes. */
import { isCreatorOnly, unprotectedNode } from './acl';
import { KINDS, nodePath } from './layout';
import type { ZooKeeper } from './zooKeeper';

/** ACLs read at once when checking what a layout holds (a stream may have thousands of shards). */
const ACL_READS_AT_ONCE = 64;

type Protection = NonNullable<ZooKeeper['creatorOnly']>;

/**
 * Creates what is missing of the layout below `protection.below`: top down, each node is created, or when it
 * exists its ACL is read, and one that is not creator-only is refused before anything is made below it; so is
 * any node stored in the layout.
 */
export async function ensureProtectedLayout(zk: ZooKeeper, base: string, protection: Protection): Promise<void> {
  await zk.mkdirp(protection.below);
  for (const path of layoutNodes(base, protection.below)) {
    const created = await zk.create(path, Buffer.alloc(0), 'persistent');
    if (created === 'exists') await refuseUnprotected(zk, path, protection.digestId);
  }
  // Again once all is made: a root open to others lets them replace an application node while it is empty.
  await verifyLayoutProtection(zk, base);
}

/**
 * With creator-only ACLs, rejects with what to do when a node of the layout (or one stored in it) is not
 * creator-only for these credentials: what the tools check before they trust anything they read.
 */
export async function verifyLayoutProtection(zk: ZooKeeper, base: string): Promise<void> {
  const protection = zk.creatorOnly;
  if (!protection) return;
  for (const path of layoutNodes(base, protection.below)) await refuseUnprotected(zk, path, protection.digestId);
  await refuseUnprotectedStored(zk, base, protection.digestId);
}

/** The layout's nodes strictly below the root, top down: the application's, the stream's (the base), its kinds. */
function layoutNodes(base: string, below: string): string[] {
  const nodes: string[] = [];
  let prefix = '';
  for (const part of base.split('/').filter((p) => p.length > 0)) {
    prefix += `/${part}`;
    if (prefix.startsWith(`${below}/`)) nodes.push(prefix);
  }
  return [...nodes, ...KINDS.map((kind) => `${base}/${kind}`)];
}

async function refuseUnprotected(zk: ZooKeeper, path: string, ours: string): Promise<void> {
  const acl = await zk.getACL(path);
  if (acl && !isCreatorOnly(acl, ours)) throw unprotectedNode(path, acl, ours);
}

/** The bootstrap and every node below the kinds, a bounded number of reads at a time. */
async function refuseUnprotectedStored(zk: ZooKeeper, base: string, ours: string): Promise<void> {
  await refuseUnprotected(zk, `${base}/bootstrap`, ours);
  for (const kind of KINDS) {
    const children = await zk.getChildren(`${base}/${kind}`);
    for (let i = 0; i < children.length; i += ACL_READS_AT_ONCE)
      await Promise.all(
        children.slice(i, i + ACL_READS_AT_ONCE).map((id) => refuseUnprotected(zk, nodePath(base, kind, id), ours)),
      );
  }
}
