/**
 * The state path against someone without the credentials, on a real ZooKeeper: nodes made by a stranger (or
 * before the credentials were set) are refused naming the node and the zkCli commands that fix it, and those
 * commands, run in ZooKeeper's own zkCli, do; after the first start nothing below the root can be deleted or
 * replaced; a chroot that denies READ is named as the configuration error it is. The built spout, driven as
 * ShellSpout drives it, and the built tools.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestId, isCreatorOnly, Perm } from '../../src/coordination/acl';
import { ZkSession } from '../../src/coordination/zk';
import { idsOf, readJson, spoutConf, spoutSuite, uniqueName, waitFor } from '../helpers/fixture';
import { createStream, putRecords } from '../helpers/kinesisAdmin';
import { ENTRY_SCRIPT, type StormDriver } from '../helpers/stormDriver';
import { quotedCommands, zkCli } from '../helpers/zkCli';
import { SPOUT_NODE } from '../helpers/spoutNode';

const suite = spoutSuite();
const { spout } = suite;
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

const refused = /NO_AUTH/;

function records(n: number, prefix: string): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({ partitionKey: `key-${i % 4}`, data: `${prefix}-${i}` }));
}

async function newStream(): Promise<string> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  return stream;
}

/** Sends `next` (as Storm does) until `probe` holds; every command must be answered all along. */
async function pumpUntil(driver: StormDriver, what: string, probe: () => boolean, timeoutMs: number): Promise<void> {
  if (!(await driver.pump(probe, { timeoutMs }))) throw new Error(`timed out waiting for ${what}\n${driver.logText()}`);
  expect(driver.frames.filter((f) => f.command === 'sync').length).toBe(driver.commandCount);
}

/** A spout configuration with digest credentials (nodes below `root` creator-only). */
function secured(root: string, payload: string, zookeeper: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    zookeeper: {
      connect: suite.services.zk.connectString,
      sessionTimeoutMs: 4_000,
      root,
      auth: { scheme: 'digest', payload },
      ...zookeeper,
    },
  };
}

async function session(payload?: string): Promise<ZkSession> {
  const zk = await ZkSession.connect({
    connect: suite.services.zk.connectString,
    sessionTimeoutMs: 10_000,
    auth: payload ? { scheme: 'digest', payload } : undefined,
  });
  closers.push(() => zk.close());
  return zk;
}

async function creatorOnly(zk: ZkSession, path: string, payload: string): Promise<boolean> {
  return isCreatorOnly((await zk.getACL(path)) ?? [], digestId(payload));
}

/** The sequence number a checkpoint node resumes after, if any. */
async function checkpointAt(zk: ZkSession, path: string): Promise<string | undefined> {
  const position = (await readJson(zk, path))?.position as { sequenceNumber?: string } | undefined;
  return position?.sequenceNumber;
}

/** Runs the built tools as an operator does; resolves with the exit code and what they printed. */
function tool(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      SPOUT_NODE,
      [ENTRY_SCRIPT, ...args],
      { env: { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', ...process.env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function configFile(stream: string, app: string, overrides: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'security-'));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'conf.json');
  writeFileSync(file, JSON.stringify({ 'kinesis.spout': spoutConf(suite.services, stream, app, overrides) }));
  return file;
}

/** The commands an error names, the credentials filled in where it asks for them. */
function fixCommands(message: string, payload: string, keep: (command: string) => boolean): string[] {
  return quotedCommands(message)
    .filter(keep)
    .map((c) => c.replace("<the spout's user:password>", payload));
}

describe('the state path against a client without the credentials', () => {
  test('before the first start, a stranger made the state path with an open ACL: refused naming the node and the fix, nothing made below it; after the deleteall it names, every record read and the stranger locked out', async () => {
    const stranger = suite.services.inspector; // no credentials: creates world:anyone:cdrwa
    const stream = await newStream();
    const app = uniqueName('app');
    const root = `/${uniqueName('sec')}`;
    const base = `${root}/${app}/${stream}`;
    const payload = `spout-${app}:pa55-${process.pid}`;
    await stranger.mkdirp(`${base}/checkpoints`);
    await stranger.mkdirp(`${base}/leases`);
    const put = await putRecords(suite.services.client, stream, records(10, 'r'));

    const driver = await spout(stream, app, secured(root, payload));
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 20_000);
    const [error] = driver.errors;
    expect(error).toContain(
      `ZooKeeper node ${root}/${app} is not creator-only for these credentials (its ACL: world:anyone:cdrwa)`,
    );
    expect(error).toContain(`"deleteall ${root}/${app}"`);
    expect(error).toContain(`"setAcl -R ${root}/${app} auth::cdrwa"`);
    expect(driver.errors.join('\n')).not.toContain('pa55');
    expect(driver.logs.some((l) => l.msg.includes('pa55'))).toBe(false);
    // Nothing used, nothing made below the stranger's nodes: the application has not started.
    expect(driver.emits).toEqual([]);
    expect((await stranger.getChildren(base)).sort()).toEqual(['checkpoints', 'leases']);
    expect(await stranger.getChildren(`${base}/checkpoints`)).toEqual([]);
    expect(await stranger.getChildren(`${root}/${app}`)).toEqual([stream]);

    // The operator runs what the error says for a node that is not the application's.
    const fix = fixCommands(error, payload, (c) => c.startsWith('deleteall'));
    expect(fix).toEqual([`deleteall ${root}/${app}`]);
    await zkCli(suite.services.zk.connectString, fix);
    await pumpUntil(driver, 'every record', () => new Set(idsOf(driver.emits)).size >= put.length, 40_000);
    expect(new Set(idsOf(driver.emits)).size).toBe(put.length);

    const trusted = await session(payload);
    for (const path of [`${root}/${app}`, base, `${base}/checkpoints`, `${base}/leases`, `${base}/bootstrap`])
      expect(await creatorOnly(trusted, path, payload)).toBe(true);
    const [shardId] = await trusted.getChildren(`${base}/checkpoints`);
    await waitFor('the lease', async () => (await trusted.getChildren(`${base}/leases`)).includes(shardId));
    await expect(stranger.remove(`${base}/checkpoints/${shardId}`, -1)).rejects.toThrow(refused);
    await expect(stranger.remove(`${base}/leases/${shardId}`, -1)).rejects.toThrow(refused);
    // The stranger made the root, open: it may remove an empty application node there, not this one.
    await expect(stranger.remove(`${root}/${app}`, -1)).rejects.toThrow(/-111/);
    expect(await trusted.getChildren(`${root}/${app}`)).toEqual([stream]);
    expect(driver.errors).toHaveLength(1);
  });

  test('after the first start, a stranger can neither delete nor replace anything below the root, nor list the applications; other applications still add theirs', async () => {
    const stream = await newStream();
    const app = uniqueName('app');
    const root = `/${uniqueName('sec')}`;
    const base = `${root}/${app}/${stream}`;
    const payload = `spout-${app}:pa55-${process.pid}`;
    const put = await putRecords(suite.services.client, stream, records(10, 'r'));
    const driver = await spout(stream, app, secured(root, payload));
    await pumpUntil(driver, 'every record', () => new Set(idsOf(driver.emits)).size >= put.length, 30_000);
    const trusted = await session(payload);
    const [shardId] = await trusted.getChildren(`${base}/checkpoints`);
    const checkpoint = `${base}/checkpoints/${shardId}`;
    await waitFor(
      'the checkpoint at the last record',
      async () => (await checkpointAt(trusted, checkpoint)) === put[9].sequenceNumber,
    );
    await waitFor('the lease', async () => (await trusted.getChildren(`${base}/leases`)).includes(shardId));
    const before = await trusted.getData(checkpoint);

    // The folders the spout made have never had their ACL changed: the join reads no ACL of what is stored in them.
    for (const kind of ['checkpoints', 'leases', 'members'])
      expect((await trusted.getVersionedACL(`${base}/${kind}`))?.aclVersion).toBe(0);
    // The root lets others add an application (CREATE) and nothing else.
    expect(await trusted.getACL(root)).toEqual([
      { scheme: 'world', id: 'anyone', perms: Perm.CREATE },
      { scheme: 'digest', id: digestId(payload), perms: Perm.ALL },
    ]);
    for (const stranger of [suite.services.inspector, await session('someone:else')]) {
      for (const path of [checkpoint, `${base}/leases/${shardId}`, `${base}/bootstrap`]) {
        await expect(stranger.remove(path, -1)).rejects.toThrow(refused);
        await expect(stranger.setData(path, Buffer.from('{"v":1}'), -1)).rejects.toThrow(refused);
        await expect(stranger.getACL(path)).rejects.toThrow(refused);
      }
      for (const path of [`${base}/checkpoints`, `${base}/leases`, base, `${root}/${app}`])
        await expect(stranger.remove(path, -1)).rejects.toThrow(refused);
      await expect(
        stranger.create(`${base}/checkpoints/shardId-000000000009`, Buffer.from('{}'), 'persistent'),
      ).rejects.toThrow(refused);
      await expect(
        stranger.create(`${base}/leases/shardId-000000000009`, Buffer.from('{}'), 'ephemeral'),
      ).rejects.toThrow(refused);
      await expect(stranger.create(`${root}/${app}/${stream}-2`, Buffer.alloc(0), 'persistent')).rejects.toThrow(
        refused,
      );
      await expect(stranger.getChildren(root)).rejects.toThrow(refused);
      await expect(stranger.setData(root, Buffer.from('x'), -1)).rejects.toThrow(refused);
      // Another application, with other credentials or none, still makes its own state below the shared root.
      expect(await stranger.create(`${root}/${uniqueName('other')}`, Buffer.alloc(0), 'persistent')).toBe('created');
    }
    const after = await trusted.getData(checkpoint);
    expect(after?.data.toString()).toBe(before?.data.toString());
    expect(driver.errors).toEqual([]);
  });

  test('state made before the credentials were set (open nodes): the spout, status and reset refuse it naming the fix; after the setAcl it names, read on from the checkpoint with nothing re-emitted', async () => {
    const stream = await newStream();
    const app = uniqueName('app');
    const root = `/${uniqueName('sec')}`;
    const base = `${root}/${app}/${stream}`;
    const payload = `spout-${app}:pa55-${process.pid}`;
    const first = await putRecords(suite.services.client, stream, records(10, 'first'));
    const open = await spout(stream, app, {
      zookeeper: { connect: suite.services.zk.connectString, sessionTimeoutMs: 4_000, root },
    });
    await pumpUntil(open, 'every record', () => new Set(idsOf(open.emits)).size >= first.length, 30_000);
    const inspector = suite.services.inspector;
    const [shardId] = await inspector.getChildren(`${base}/checkpoints`);
    await waitFor(
      'the checkpoint at the last record',
      async () => (await checkpointAt(inspector, `${base}/checkpoints/${shardId}`)) === first[9].sequenceNumber,
    );
    await open.stop();

    const driver = await spout(stream, app, secured(root, payload));
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 20_000);
    const [error] = driver.errors;
    expect(error).toContain(
      `ZooKeeper node ${root}/${app} is not creator-only for these credentials (its ACL: world:anyone:cdrwa)`,
    );
    expect(driver.emits).toEqual([]);

    const config = configFile(stream, app, secured(root, payload));
    for (const args of [
      ['status', '--config', config],
      ['reset', '--config', config, '--to', 'TRIM_HORIZON', '--yes'],
    ]) {
      const run = await tool(args);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `not trusting the state at ${base}: ZooKeeper node ${root}/${app} is not creator-only`,
      );
      expect(run.stderr).toContain(`"setAcl -R ${root}/${app} auth::cdrwa"`);
      expect(run.stdout).toBe('');
    }
    expect(await checkpointAt(inspector, `${base}/checkpoints/${shardId}`)).toBe(first[9].sequenceNumber);

    // The operator runs what the error says for the application's own state.
    const fix = fixCommands(error, payload, (c) => !c.startsWith('deleteall'));
    expect(fix).toEqual([`addauth digest ${payload}`, `setAcl -R ${root}/${app} auth::cdrwa`]);
    await zkCli(suite.services.zk.connectString, fix);
    const trusted = await session(payload);
    for (const path of [`${root}/${app}`, base, `${base}/checkpoints/${shardId}`, `${base}/bootstrap`])
      expect(await creatorOnly(trusted, path, payload)).toBe(true);
    // Fixed by setAcl: its ACL version says so, and every node stored in it is checked at each join.
    expect((await trusted.getVersionedACL(`${base}/checkpoints`))?.aclVersion).toBeGreaterThan(0);

    const second = await putRecords(suite.services.client, stream, records(5, 'second'));
    await pumpUntil(driver, 'the new records', () => new Set(idsOf(driver.emits)).size >= second.length, 40_000);
    const firstIds = new Set(idsOf(open.emits));
    expect(idsOf(driver.emits).filter((id) => firstIds.has(id))).toEqual([]);
    expect((await tool(['status', '--config', config])).code).toBe(0);
  });
});

describe('a chroot whose node denies READ', () => {
  test('at start: reported at once, naming the chroot and the fix; read once READ is granted', async () => {
    const stream = await newStream();
    const app = uniqueName('app');
    const chroot = `/${uniqueName('chroot')}`;
    // Its owner lets others add below it, nothing more: the spout's nodes could be made, its heartbeat never answered.
    await zkCli(suite.services.zk.connectString, [
      'addauth digest admin:secret',
      `create ${chroot}`,
      `setAcl ${chroot} world:anyone:c,auth::cdrwa`,
    ]);
    const put = await putRecords(suite.services.client, stream, records(10, 'r'));
    const driver = await spout(stream, app, {
      zookeeper: { connect: `${suite.services.zk.connectString}${chroot}`, sessionTimeoutMs: 4_000, root: '/it' },
    });
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 20_000);
    expect(driver.errors[0]).toContain(
      `ZooKeeper does not let these credentials read ${chroot}, the chroot of the connect string ${suite.services.zk.connectString}${chroot} (NO_AUTH)`,
    );
    expect(driver.errors[0]).toContain(
      `zkCli.sh -server ${suite.services.zk.connectString}, "getAcl ${chroot}", then "setAcl ${chroot} <the entries shown>,world:anyone:r"`,
    );
    expect(driver.emits).toEqual([]);

    // As the error says: the entries getAcl shows, and READ.
    await zkCli(suite.services.zk.connectString, [
      'addauth digest admin:secret',
      `setAcl ${chroot} world:anyone:c,digest:${digestId('admin:secret')}:cdrwa,world:anyone:r`,
    ]);
    await pumpUntil(driver, 'every record', () => new Set(idsOf(driver.emits)).size >= put.length, 40_000);
  });

  test('while reading: READ taken away is reported (the session is given up and the next join says why), and nothing is emitted until it is back', async () => {
    const stream = await newStream();
    const app = uniqueName('app');
    const chroot = `/${uniqueName('chroot')}`;
    await zkCli(suite.services.zk.connectString, [
      'addauth digest admin:secret',
      `create ${chroot}`,
      `setAcl ${chroot} world:anyone:cdrwa,auth::cdrwa`,
    ]);
    const first = await putRecords(suite.services.client, stream, records(5, 'first'));
    const driver = await spout(stream, app, {
      zookeeper: { connect: `${suite.services.zk.connectString}${chroot}`, sessionTimeoutMs: 4_000, root: '/it' },
    });
    await pumpUntil(driver, 'every record', () => new Set(idsOf(driver.emits)).size >= first.length, 30_000);

    await zkCli(suite.services.zk.connectString, [
      'addauth digest admin:secret',
      `setAcl ${chroot} world:anyone:cdw,auth::cdrwa`,
    ]);
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 20_000);
    expect(driver.errors[0]).toContain(`ZooKeeper does not let these credentials read ${chroot}`);
    const second = await putRecords(suite.services.client, stream, records(5, 'second'));
    const emitted = driver.emits.length;
    await driver.pump(() => false, { timeoutMs: 3_000 });
    expect(driver.emits.length).toBe(emitted);

    await zkCli(suite.services.zk.connectString, [
      'addauth digest admin:secret',
      `setAcl ${chroot} world:anyone:cdrw,auth::cdrwa`,
    ]);
    const secondIds = new Set(second.map((r) => `${r.shardId}:${r.sequenceNumber}`));
    await pumpUntil(
      driver,
      'the new records',
      () => idsOf(driver.emits).filter((id) => secondIds.has(id)).length >= second.length,
      40_000,
    );
  });
});
