import {
  chrootOf,
  describeAcl,
  digestId,
  isCreatorOnly,
  Perm,
  unprotectedNode,
  unreadableChroot,
} from '../../../src/coordination/acl';
import { CoordinationStore } from '../../../src/coordination/store';
import type { AclEntry, NodeData, ZooKeeper } from '../../../src/coordination/zooKeeper';

const ours = digestId('spout:s3cret:with:colons');
const open: AclEntry[] = [{ scheme: 'world', id: 'anyone', perms: Perm.ALL }];
const mine: AclEntry[] = [{ scheme: 'digest', id: ours, perms: Perm.ALL }];

describe('ACLs in ZooKeeper terms', () => {
  it('digest ids as ZooKeeper computes them (values a real 3.8 server gave)', () => {
    expect(digestId('u:p:w')).toBe('u:73ZGnbNm7qd5vKTf9th3HSbNbio=');
    expect(digestId('admin:pw')).toBe('admin:HyfYpDg4zqvjWwhkAYRiLwvklpU=');
    expect(ours.startsWith('spout:')).toBe(true);
  });

  it('creator-only: every entry names these credentials and together they grant everything', () => {
    expect(isCreatorOnly(mine, ours)).toBe(true);
    expect(
      isCreatorOnly(
        [
          { scheme: 'digest', id: ours, perms: Perm.READ | Perm.WRITE },
          { scheme: 'digest', id: ours, perms: Perm.CREATE | Perm.DELETE | Perm.ADMIN },
        ],
        ours,
      ),
    ).toBe(true);
    expect(isCreatorOnly([], ours)).toBe(false);
    expect(isCreatorOnly(open, ours)).toBe(false);
    expect(isCreatorOnly([...mine, { scheme: 'world', id: 'anyone', perms: Perm.READ }], ours)).toBe(false);
    expect(isCreatorOnly([{ scheme: 'digest', id: digestId('spout:other'), perms: Perm.ALL }], ours)).toBe(false);
    expect(isCreatorOnly([{ scheme: 'digest', id: ours, perms: Perm.ALL & ~Perm.ADMIN }], ours)).toBe(false);
    expect(isCreatorOnly([{ scheme: 'ip', id: '127.0.0.1', perms: Perm.ALL }], ours)).toBe(false);
  });

  it("described in zkCli's notation, no password hash shown", () => {
    const acl: AclEntry[] = [
      { scheme: 'world', id: 'anyone', perms: Perm.CREATE | Perm.READ },
      { scheme: 'digest', id: ours, perms: Perm.ALL },
      { scheme: 'digest', id: digestId('bob:pw'), perms: Perm.ADMIN },
    ];
    const text = describeAcl(acl, ours);
    expect(text).toBe('world:anyone:cr,digest:(these credentials):cdrwa,digest:bob:(hash):a');
    expect(text).not.toContain(ours.split(':')[1]);
  });

  it('an unprotected node: named with the zkCli commands for both cases, no secret', () => {
    const err = unprotectedNode('/ks/app', open, ours);
    expect(err.retriable).toBe(false);
    expect(err.message).toContain(
      'ZooKeeper node /ks/app is not creator-only for these credentials (its ACL: world:anyone:cdrwa)',
    );
    expect(err.message).toContain(`"addauth digest <the spout's user:password>" then "setAcl -R /ks/app auth::cdrwa"`);
    expect(err.message).toContain('"deleteall /ks/app"');
    expect(err.message).not.toContain('s3cret');
  });

  it('the chroot of a connect string, and what to say when it cannot be read', () => {
    expect(chrootOf('a:1,b:2/x/y/')).toEqual({ servers: 'a:1,b:2', chroot: '/x/y' });
    expect(chrootOf('a:1')).toEqual({ servers: 'a:1', chroot: '/' });
    expect(unreadableChroot('a:1/x').message).toContain(
      "read /x, the chroot of the connect string a:1/x (NO_AUTH): the spout's heartbeat is a version check of it",
    );
    expect(unreadableChroot('a:1/x').message).toContain(
      'zkCli.sh -server a:1, "getAcl /x", then "setAcl /x <the entries shown>,world:anyone:r"',
    );
    expect(unreadableChroot('a:1').message).toContain("ZooKeeper's root node / (NO_AUTH)");
  });
});

/**
 * Nodes with ACLs: what a stranger made before, and what this session makes (creator-only below the root).
 * Nodes that exist before have had their ACL set since they were made (ACL version 1: as the fix's setAcl
 * leaves them) unless named in `neverChanged`; nodes made here have version 0.
 */
function aclZooKeeper(below: string, existing: Record<string, AclEntry[]>, neverChanged: readonly string[] = []) {
  const nodes = new Map<string, AclEntry[]>(Object.entries(existing));
  const aclVersions = new Map<string, number>(Object.keys(existing).map((p) => [p, neverChanged.includes(p) ? 0 : 1]));
  const created: string[] = [];
  const aclReads: string[] = [];
  const parentOf = (path: string) => path.slice(0, path.lastIndexOf('/'));
  const create = async (path: string): Promise<'created' | 'exists'> => {
    if (nodes.has(path)) return 'exists';
    if (parentOf(path) !== '' && !nodes.has(parentOf(path))) throw new Error(`no parent for ${path}`);
    nodes.set(path, path.startsWith(`${below}/`) ? mine : open);
    aclVersions.set(path, 0);
    created.push(path);
    return 'created';
  };
  const zk = {
    sessionId: '1',
    connectionState: 'connected',
    sessionTimeoutMs: 10_000,
    creatorOnly: { below, digestId: ours },
    trustedUntil: () => Infinity,
    create,
    mkdirp: async (path: string) => {
      let prefix = '';
      for (const part of path.split('/').filter((p) => p)) await create((prefix += `/${part}`));
    },
    getData: async (path: string): Promise<NodeData | undefined> =>
      nodes.has(path) ? { data: Buffer.from('{"v":1}'), version: 0, ephemeralOwner: '0' } : undefined,
    getACL: async (path: string) => {
      aclReads.push(path);
      return nodes.get(path);
    },
    getVersionedACL: async (path: string) => {
      aclReads.push(path);
      const acl = nodes.get(path);
      return acl && { acl, aclVersion: aclVersions.get(path) ?? 0 };
    },
    setData: async () => 'conflict' as const,
    getChildren: async (path: string) =>
      [...nodes.keys()].filter((p) => parentOf(p) === path).map((p) => p.slice(path.length + 1)),
    remove: async () => false,
    transaction: async () => false,
    close: () => undefined,
  } satisfies ZooKeeper;
  return { zk, created, aclReads };
}

describe('the layout with creator-only ACLs', () => {
  const base = '/ks/app/stream';

  it('a first start makes every node, creator-only', async () => {
    const { zk, created } = aclZooKeeper('/ks', {});
    await new CoordinationStore(zk, base, 'm').ensureLayout();
    expect(created).toEqual([
      '/ks',
      '/ks/app',
      base,
      ...['checkpoints', 'finished', 'ended', 'leases', 'members'].map((k) => `${base}/${k}`),
    ]);
  });

  it("a stranger's node is refused before anything is made below it", async () => {
    const { zk, created } = aclZooKeeper('/ks', { '/ks': open, '/ks/app': open });
    await expect(new CoordinationStore(zk, base, 'm').ensureLayout()).rejects.toThrow(
      'ZooKeeper node /ks/app is not creator-only for these credentials (its ACL: world:anyone:cdrwa)',
    );
    expect(created).toEqual([]);
  });

  it('an open node stored below protected ones (a checkpoint, the bootstrap) is refused too, by the spout and the tools', async () => {
    const layout = Object.fromEntries(
      ['/ks/app', base, ...['checkpoints', 'finished', 'ended', 'leases', 'members'].map((k) => `${base}/${k}`)].map(
        (p) => [p, mine],
      ),
    );
    for (const stray of [`${base}/checkpoints/shardId-000000000007`, `${base}/bootstrap`, `${base}/members/m2`]) {
      const { zk } = aclZooKeeper('/ks', { '/ks': open, ...layout, [stray]: open });
      const store = new CoordinationStore(zk, base, 'm');
      await expect(store.ensureLayout()).rejects.toThrow(`ZooKeeper node ${stray} is not creator-only`);
      await expect(store.verifyProtection()).rejects.toThrow(`ZooKeeper node ${stray} is not creator-only`);
    }
    const { zk } = aclZooKeeper('/ks', { '/ks': open, ...layout, [`${base}/checkpoints/shardId-000000000007`]: mine });
    await new CoordinationStore(zk, base, 'm').ensureLayout();
  });

  it('reads no stored node of a folder made creator-only and never changed: nobody else could create in it', async () => {
    const folders = ['checkpoints', 'finished', 'ended', 'leases', 'members'].map((k) => `${base}/${k}`);
    const layout = Object.fromEntries(['/ks/app', base, ...folders].map((p) => [p, mine]));
    const stored = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`${base}/checkpoints/shardId-${String(i).padStart(12, '0')}`, mine]),
    );
    const { zk, aclReads } = aclZooKeeper('/ks', { '/ks': open, ...layout, ...stored }, ['/ks/app', base, ...folders]);
    await new CoordinationStore(zk, base, 'm').verifyProtection();
    expect(aclReads).toEqual(['/ks/app', base, ...folders, `${base}/bootstrap`]);
    // A first start makes the folders itself: a later join reads the layout's ACLs and nothing below.
    const fresh = aclZooKeeper('/ks', {});
    const store = new CoordinationStore(fresh.zk, base, 'm');
    await store.ensureLayout();
    fresh.aclReads.length = 0;
    await store.verifyProtection();
    expect(fresh.aclReads.filter((p) => p.split('/').length > base.split('/').length + 1)).toEqual([]);
  });

  it("reads every stored node of a folder whose ACL was set after it was made (it may hold a stranger's node)", async () => {
    const folders = ['checkpoints', 'finished', 'ended', 'leases', 'members'].map((k) => `${base}/${k}`);
    const layout = Object.fromEntries(['/ks/app', base, ...folders].map((p) => [p, mine]));
    const stray = `${base}/leases/shardId-000000000003`;
    const sealedButLeases = ['/ks/app', base, ...folders.filter((f) => !f.endsWith('leases'))];
    const { zk } = aclZooKeeper('/ks', { '/ks': open, ...layout, [stray]: open }, sealedButLeases);
    await expect(new CoordinationStore(zk, base, 'm').verifyProtection()).rejects.toThrow(
      `ZooKeeper node ${stray} is not creator-only`,
    );
  });

  it('without credentials nothing is checked (every node is open anyway)', async () => {
    const { zk, aclReads } = aclZooKeeper('/ks', { '/ks': open, '/ks/app': open });
    const store = new CoordinationStore({ ...zk, creatorOnly: undefined }, base, 'm');
    await store.ensureLayout();
    await store.verifyProtection();
    expect(aclReads).toEqual([]);
  });
});
