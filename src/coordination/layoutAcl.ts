/** With creator-only ACLs: the layout is used only when these credentials alone control each of its nodes. */
import { isCreatorOnly, unprotectedNode } from './acl';
import { KINDS, type Kind, nodePath } from './layout';
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
 *
 * The nodes stored in a folder are read only when the folder's ACL may have been changed since it was made.
 * A folder creator-only for these credentials whose ACL was never changed (ACL version 0) never let anyone
 * else create in it (ZooKeeper checks CREATE on the parent), so everything in it was created with these
 * credentials, which create every node creator-only; and only they may change such a node's ACL (ADMIN).
 * A folder made creator-only later (`setAcl`, as the fix for state made before the credentials were set)
 * may hold nodes someone else made before: each one is read.
 */
export async function verifyLayoutProtection(zk: ZooKeeper, base: string): Promise<void> {
  const protection = zk.creatorOnly;
  if (!protection) return;
  const ours = protection.digestId;
  const sealed = new Set<string>();
  for (const path of layoutNodes(base, protection.below))
    if ((await refuseUnprotected(zk, path, ours)) === 0) sealed.add(path);
  await refuseUnprotected(zk, `${base}/bootstrap`, ours);
  for (const kind of KINDS) if (!sealed.has(`${base}/${kind}`)) await refuseUnprotectedIn(zk, base, kind, ours);
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

/** Rejects when the node is there and not creator-only; else its ACL version (undefined: gone, or not known). */
async function refuseUnprotected(zk: ZooKeeper, path: string, ours: string): Promise<number | undefined> {
  const read = zk.getVersionedACL
    ? await zk.getVersionedACL(path)
    : await zk.getACL(path).then((acl) => acl && { acl, aclVersion: undefined });
  if (read && !isCreatorOnly(read.acl, ours)) throw unprotectedNode(path, read.acl, ours);
  return read?.aclVersion;
}

/** Every node stored in one folder, a bounded number of reads at a time. */
async function refuseUnprotectedIn(zk: ZooKeeper, base: string, kind: Kind, ours: string): Promise<void> {
  const children = await zk.getChildren(`${base}/${kind}`);
  for (let i = 0; i < children.length; i += ACL_READS_AT_ONCE)
    await Promise.all(
      children.slice(i, i + ACL_READS_AT_ONCE).map((id) => refuseUnprotected(zk, nodePath(base, kind, id), ours)),
    );
}
