/**
 * Who may do what to a node, in ZooKeeper's terms and zkCli's: the digest id of the spout's credentials,
 * whether a node is creator-only for them, and what to tell an operator about one that is not. Pure.
 */
import { createHash } from 'node:crypto';
import { ErrorCode, SpoutError } from '../errors';
import type { AclEntry } from './zooKeeper';

/** ZooKeeper's permission bits (ZooDefs.Perms). */
export const Perm = { READ: 1, WRITE: 2, CREATE: 4, DELETE: 8, ADMIN: 16, ALL: 31 } as const;

/** The id ZooKeeper's digest provider gives `user:password`: the user, and the base64 SHA-1 of the whole payload. */
export function digestId(payload: string): string {
  const user = payload.slice(0, Math.max(0, payload.indexOf(':')));
  return `${user}:${createHash('sha1').update(payload, 'utf8').digest('base64')}`;
}

/** Creator-only for the credentials `ours` (a digest id): every entry names them, and together they grant all. */
export function isCreatorOnly(acl: readonly AclEntry[], ours: string): boolean {
  const granted = acl.reduce((perms, entry) => perms | entry.perms, 0);
  return acl.length > 0 && granted === Perm.ALL && acl.every((e) => e.scheme === 'digest' && e.id === ours);
}

const LETTERS: readonly [number, string][] = [
  [Perm.CREATE, 'c'],
  [Perm.DELETE, 'd'],
  [Perm.READ, 'r'],
  [Perm.WRITE, 'w'],
  [Perm.ADMIN, 'a'],
];

/** zkCli's notation (`world:anyone:cdrwa,...`), digest hashes left out (a password's hash is no one's business). */
export function describeAcl(acl: readonly AclEntry[], ours: string): string {
  if (acl.length === 0) return '(empty)';
  return acl
    .map((entry) => {
      const perms = LETTERS.filter(([bit]) => entry.perms & bit)
        .map(([, letter]) => letter)
        .join('');
      const who =
        entry.scheme !== 'digest'
          ? `${entry.scheme}:${entry.id}`
          : entry.id === ours
            ? 'digest:(these credentials)'
            : `digest:${entry.id.split(':')[0]}:(hash)`;
      return `${who}:${perms || '(none)'}`;
    })
    .join(',');
}

/** Where an operator fixes a node: zkCli connected as the spout is, so that the paths below are the spout's. */
const IN_ZKCLI = 'in zkCli.sh, connected as the spout is (its zookeeper.connect, chroot included)';

/**
 * A node below the root that these credentials alone do not control (someone else made it before the
 * application's first start, or it predates the credentials): whoever else it lets in could delete or
 * replace what the spout writes below it (ZooKeeper checks DELETE and CREATE on the parent).
 */
export function unprotectedNode(path: string, acl: readonly AclEntry[], ours: string): SpoutError {
  return new SpoutError(
    ErrorCode.ZooKeeper,
    `ZooKeeper node ${path} is not creator-only for these credentials (its ACL: ${describeAcl(acl, ours)}): ` +
      'whoever else it lets in could delete or replace the checkpoints and leases kept below it, so the spout uses none of it and reads nothing. ' +
      `Fix it ${IN_ZKCLI}: if it holds this application's state (created before the credentials were set), ` +
      `"addauth digest <the spout's user:password>" then "setAcl -R ${path} auth::cdrwa"; ` +
      `if it is not this application's (someone else created it before the first start), "deleteall ${path}". ` +
      'The spout goes on by itself once it is fixed',
  );
}

/** `host:port,...[/chroot]` split: the servers, and the node the session sees as `/`. */
export function chrootOf(connect: string): { servers: string; chroot: string } {
  const slash = connect.indexOf('/');
  if (slash < 0) return { servers: connect, chroot: '/' };
  return { servers: connect.slice(0, slash), chroot: connect.slice(slash).replace(/\/+$/, '') || '/' };
}

/**
 * The session's `/` (the chroot, or the real root) denies READ: the heartbeat, a version check of `/`, which
 * ZooKeeper allows only with READ, is refused, so no lease could ever be trusted and nothing be emitted.
 */
export function unreadableChroot(connect: string): SpoutError {
  const { servers, chroot } = chrootOf(connect);
  const what = chroot === '/' ? "ZooKeeper's root node /" : `${chroot}, the chroot of the connect string ${connect}`;
  return new SpoutError(
    ErrorCode.ZooKeeper,
    `ZooKeeper does not let these credentials read ${what} (NO_AUTH): the spout's heartbeat is a version check of it, which ZooKeeper allows only with READ, ` +
      'so no lease could ever be trusted and nothing would be emitted. ' +
      `Grant READ on it: in zkCli.sh -server ${servers}, "getAcl ${chroot}", then "setAcl ${chroot} <the entries shown>,world:anyone:r" ` +
      `(or, after "addauth digest <the spout's user:password>", <the entries shown>,auth::r for these credentials alone); ` +
      'or give zookeeper.connect a chroot these credentials may read',
  );
}
