/**
 * Whatever keeps the spout from reading reaches Storm's UI (`error`) within a bounded time, naming the
 * cause and the fix, while the process keeps answering Storm and recovers by itself; Storm's own
 * ZooKeeper as the default, digest credentials and creator-only ACLs; what is said at start.
 * The built spout, driven as ShellSpout drives it, against real ZooKeeper and kinesis-local.
 */
import { createStream, putRecords } from '../helpers/kinesisAdmin';
import { idsOf, readJson, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import { startHttpFaultProxy, type HttpFaultProxy } from '../helpers/httpFaultProxy';
import { startTcpProxy, type TcpProxy } from '../helpers/tcpProxy';
import { startZooKeeper, type ZooKeeperServer } from '../helpers/zookeeperServer';
import { freePort, scratchDir } from '../helpers/ports';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { ZkSession } from '../../src/coordination/zk';
import type { StormDriver } from '../helpers/stormDriver';

const suite = spoutSuite();
const { spout } = suite;
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function records(n: number, prefix = 'r'): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({ partitionKey: `key-${i % 8}`, data: `${prefix}-${i}` }));
}

async function newStream(shards = 1): Promise<string> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, shards);
  return stream;
}

/** Sends `next` (as Storm does) until `probe` holds; every command must be answered all along. */
async function pumpUntil(driver: StormDriver, what: string, probe: () => boolean, timeoutMs: number): Promise<void> {
  const delivered = await driver.pump(probe, { timeoutMs });
  if (!delivered) throw new Error(`timed out waiting for ${what}\n${driver.logText()}`);
  expect(driver.frames.filter((f) => f.command === 'sync').length).toBe(driver.commandCount);
}

async function session(connect: string, payload?: string): Promise<ZkSession> {
  const zk = await ZkSession.connect({
    connect,
    sessionTimeoutMs: 10_000,
    auth: payload ? { scheme: 'digest', payload } : undefined,
  });
  closers.push(() => zk.close());
  return zk;
}

const fast = { sessionTimeoutMs: 2_000, root: '/it' };

describe('reported in the Storm UI, while Storm is answered and the spout retries', () => {
  test('a ZooKeeper host name that does not resolve: named within seconds, with what to check', async () => {
    const driver = await spout(await newStream(), uniqueName('app'), {
      zookeeper: { connect: 'zk.invalid:2181', ...fast },
    });
    const started = Date.now();
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 30_000);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(driver.errors[0]).toMatch(
      /cannot join ZooKeeper at zk\.invalid:2181 .*zk\.invalid does not resolve \(ENOTFOUND\): check the host name/,
    );
    expect(driver.errors[0]).toMatch(/Check kinesis\.spout\.zookeeper\.connect/);
    expect(driver.emits).toEqual([]);
  });

  test('ZooKeeper accepting connections but giving no session (cut off): reported, then read by itself once it answers', async () => {
    const stream = await newStream();
    const put = await putRecords(suite.services.client, stream, records(20));
    const proxy: TcpProxy = await startTcpProxy(suite.services.zk.port);
    closers.push(() => proxy.close());
    proxy.blackhole();
    const driver = await spout(stream, uniqueName('app'), {
      zookeeper: { connect: `127.0.0.1:${proxy.port}`, ...fast },
    });
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 30_000);
    expect(driver.errors[0]).toMatch(
      new RegExp(`127\\.0\\.0\\.1:${proxy.port} accepts connections but gave no session`),
    );
    expect(driver.emits).toEqual([]);
    proxy.restore();
    await pumpUntil(driver, 'every record', () => new Set(idsOf(driver.emits)).size >= put.length, 40_000);
  });

  test('ZooKeeper cut off while the spout reads: emitting stops, the loss is reported, and reading resumes by itself', async () => {
    const stream = await newStream();
    const before = await putRecords(suite.services.client, stream, records(10, 'before'));
    const proxy: TcpProxy = await startTcpProxy(suite.services.zk.port);
    closers.push(() => proxy.close());
    const driver = await spout(stream, uniqueName('app'), {
      zookeeper: { connect: `127.0.0.1:${proxy.port}`, ...fast },
    });
    await pumpUntil(driver, 'the records put before', () => new Set(idsOf(driver.emits)).size >= before.length, 30_000);
    proxy.blackhole();
    const cutAt = performance.now();
    const during = await putRecords(suite.services.client, stream, records(10, 'during'));
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 60_000);
    // Session timeout (2 s) before the session is given up, then three join attempts of 2 s each, probes and pauses.
    expect(performance.now() - cutAt).toBeLessThan(30_000);
    expect(driver.errors[0]).toMatch(
      new RegExp(`cannot join ZooKeeper at 127\\.0\\.0\\.1:${proxy.port} .*accepts connections but gave no session`),
    );
    // Leases are trusted for at most a session timeout after the leader last confirmed one.
    const emittedWhileCut = driver.emits.filter((e) => e.receivedAt > cutAt + 2_000);
    expect(emittedWhileCut).toEqual([]);
    proxy.restore();
    await pumpUntil(
      driver,
      'the records put while cut off',
      () => during.every((r) => driver.emits.some((e) => e.id === `${r.shardId}:${r.sequenceNumber}`)),
      40_000,
    );
  });

  test('a stream that does not exist: reported as such (not as ZooKeeper), and read once it is created', async () => {
    const stream = uniqueName('stream');
    const driver = await spout(stream, uniqueName('app'));
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 30_000);
    expect(driver.errors[0]).toMatch(
      new RegExp(
        `cannot start reading stream ${stream} in .*ResourceNotFoundException.*check streamName/streamArn, region and endpoint`,
      ),
    );
    expect(driver.errors[0]).not.toMatch(/cannot join ZooKeeper/);
    await createStream(suite.services.client, stream, 1);
    const put = await putRecords(suite.services.client, stream, records(10));
    await pumpUntil(driver, 'every record', () => new Set(idsOf(driver.emits)).size >= put.length, 40_000);
  });

  test('access denied while joining (DescribeStreamSummary): reported at once with the IAM actions, read once granted', async () => {
    const stream = await newStream();
    const put = await putRecords(suite.services.client, stream, records(10));
    const proxy: HttpFaultProxy = await startHttpFaultProxy(suite.services.kinesis.endpoint);
    closers.push(() => proxy.close());
    const denied = proxy.inject({
      operations: ['DescribeStreamSummary'],
      status: 400,
      type: 'AccessDeniedException',
      message: 'not authorized to perform kinesis:DescribeStreamSummary',
    });
    const driver = await spout(stream, uniqueName('app'), { endpoint: proxy.endpoint });
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 15_000);
    // At the first failure: waiting does not grant permissions.
    expect(denied.injected).toBe(1);
    expect(driver.errors[0]).toMatch(
      /cannot start reading .*AccessDeniedException.*grant the worker's role kinesis:ListShards, kinesis:DescribeStreamSummary/,
    );
    denied.remove();
    await pumpUntil(driver, 'every record', () => new Set(idsOf(driver.emits)).size >= put.length, 30_000);
  });

  test('an ensemble that requires SASL: named at once (the client cannot do SASL), Storm still answered', async () => {
    const sasl: ZooKeeperServer = await startZooKeeper({
      extraConfig: [
        'sessionRequireClientSASLAuth=true',
        'authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider',
      ],
    });
    closers.push(() => sasl.stop());
    const driver = await spout(await newStream(), uniqueName('app'), {
      zookeeper: { connect: sasl.connectString, ...fast },
    });
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 15_000);
    expect(driver.errors[0]).toMatch(
      /SESSION_CLOSED_REQUIRE_SASL_AUTH\[-124\]; the ensemble requires SASL authentication .*\(node-zookeeper-client\) cannot do/,
    );
    await pumpUntil(driver, 'a while of answered commands', () => false || driver.commandCount > 50, 10_000);
    expect(driver.stderr.join('')).toBe('');
  });

  test('an ensemble that accepts only TLS: named (the client has no TLS), Storm still answered', async () => {
    const dir = scratchDir('zk-tls-');
    const keystore = join(dir, 'keystore.p12');
    // Not execFileSync: a loaded machine takes seconds to make the key, and a blocked event loop would expire
    // the sessions this file shares (the inspector's, 10 s) and fail the tests after this one.
    await promisify(execFile)('keytool', [
      '-genkeypair',
      '-alias',
      'zk',
      '-keyalg',
      'RSA',
      '-keysize',
      '2048',
      '-keystore',
      keystore,
      '-storetype',
      'PKCS12',
      '-storepass',
      'changeit',
      '-keypass',
      'changeit',
      '-dname',
      'CN=localhost',
      '-validity',
      '2',
    ]);
    const securePort = await freePort();
    // The plain clientPort stays (the helper checks readiness through it); the spout is given only the TLS one.
    const tls: ZooKeeperServer = await startZooKeeper({
      extraClasspath: ['/usr/share/java/netty-codec.jar'],
      extraConfig: [
        'serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory',
        `secureClientPort=${securePort}`,
        `ssl.keyStore.location=${keystore}`,
        'ssl.keyStore.password=changeit',
        'ssl.keyStore.type=PKCS12',
        'ssl.clientAuth=none',
      ],
    });
    closers.push(() => tls.stop());
    const driver = await spout(await newStream(), uniqueName('app'), {
      zookeeper: { connect: `127.0.0.1:${securePort}`, ...fast },
    });
    await pumpUntil(driver, 'the error in Storm', () => driver.errors.length > 0, 40_000);
    expect(driver.errors[0]).toMatch(
      new RegExp(
        `127\\.0\\.0\\.1:${securePort} speaks TLS: the ensemble requires TLS \\(secureClientPort\\), which this spout's ZooKeeper client \\(node-zookeeper-client\\) cannot use`,
      ),
    );
    expect(driver.emits).toEqual([]);
  });
});

describe("Storm's own ZooKeeper, secured like Storm's", () => {
  test('without zookeeper.connect the spout uses storm.zookeeper.servers and storm.zookeeper.port', async () => {
    const stream = await newStream();
    const app = uniqueName('app');
    const put = await putRecords(suite.services.client, stream, records(10));
    const driver = await spout(
      stream,
      app,
      { zookeeper: { root: '/it' } },
      {
        conf: { 'storm.zookeeper.servers': ['127.0.0.1'], 'storm.zookeeper.port': suite.services.zk.port },
      },
    );
    await pumpUntil(driver, 'every record', () => new Set(idsOf(driver.emits)).size >= put.length, 30_000);
    expect(driver.logs.map((l) => l.msg)).toContain(
      `ZooKeeper: 127.0.0.1:${suite.services.zk.port}, from Storm's own ensemble (storm.zookeeper.servers); state under /it/${app}/`,
    );
    expect(await suite.services.inspector.getChildren(`${stateBase(stream, app)}/checkpoints`)).toHaveLength(1);
  });

  test('with credentials, a client without them can neither read nor change checkpoints or leases; one with them can', async () => {
    const stream = await newStream();
    const app = uniqueName('app');
    const payload = `spout-${app}:pa55-${process.pid}`;
    const put = await putRecords(suite.services.client, stream, records(10));
    const root = '/it-acl';
    const driver = await spout(
      stream,
      app,
      { zookeeper: { connect: suite.services.zk.connectString, sessionTimeoutMs: 4_000, root } },
      {
        conf: { 'storm.zookeeper.topology.auth.scheme': 'digest', 'storm.zookeeper.topology.auth.payload': payload },
      },
    );
    await pumpUntil(driver, 'every record', () => new Set(idsOf(driver.emits)).size >= put.length, 30_000);
    const base = `${root}/${app}/${stream}`;
    const trusted = await session(suite.services.zk.connectString, payload);
    const [shardId] = await trusted.getChildren(`${base}/checkpoints`);
    await waitFor('the lease', async () => (await trusted.getChildren(`${base}/leases`)).includes(shardId));
    expect((await readJson(trusted, `${base}/checkpoints/${shardId}`))?.v).toBe(1);

    for (const outsider of [suite.services.inspector, await session(suite.services.zk.connectString, 'someone:else')]) {
      const refused = /NO_AUTH/;
      await expect(outsider.getData(`${base}/checkpoints/${shardId}`)).rejects.toThrow(refused);
      await expect(outsider.setData(`${base}/checkpoints/${shardId}`, Buffer.from('{}'), -1)).rejects.toThrow(refused);
      await expect(outsider.getData(`${base}/leases/${shardId}`)).rejects.toThrow(refused);
      await expect(outsider.remove(`${base}/leases/${shardId}`, -1)).rejects.toThrow(refused);
      await expect(
        outsider.create(`${base}/leases/shardId-000000000099`, Buffer.from('{}'), 'ephemeral'),
      ).rejects.toThrow(refused);
      await expect(outsider.getChildren(`${base}/checkpoints`)).rejects.toThrow(refused);
      await expect(outsider.remove(`${base}/bootstrap`, -1)).rejects.toThrow(refused);
      // The shared root stays usable by applications with other credentials: they add theirs, and list nothing.
      expect(await outsider.create(`${root}/${uniqueName('other')}`, Buffer.alloc(0), 'persistent')).toBe('created');
      await expect(outsider.getChildren(root)).rejects.toThrow(refused);
    }
    expect(
      await trusted.setData(
        `${base}/checkpoints/${shardId}`,
        (await trusted.getData(`${base}/checkpoints/${shardId}`))!.data,
        -1,
      ),
    ).toEqual(expect.any(Number));
    expect(driver.logs.some((l) => l.msg.includes(payload) || l.msg.includes('pa55'))).toBe(false);
    expect(driver.errors).toEqual([]);

    // The same application started with other credentials: told what is wrong at once, and nothing is read.
    const stranger = await spout(stream, app, {
      zookeeper: {
        connect: suite.services.zk.connectString,
        sessionTimeoutMs: 4_000,
        root,
        auth: { scheme: 'digest', payload: 'other:creds' },
      },
    });
    await pumpUntil(stranger, 'the error in Storm', () => stranger.errors.length > 0, 15_000);
    expect(stranger.errors[0]).toMatch(
      /NO_AUTH.*the state was created with other ones\. Use the credentials it was created with/,
    );
    expect(stranger.errors.join('\n')).not.toContain('other:creds');
  });
});

describe('said at every start', () => {
  test('a defaulted applicationName is warned about; where each shard resumes, and that initialPosition applied only to the first start', async () => {
    const stream = await newStream(2);
    const topology = uniqueName('topo');
    const put = await putRecords(suite.services.client, stream, records(20));
    const conf = { 'topology.name': topology };
    const first = await spout(stream, undefined as unknown as string, {}, { conf });
    const warning = await waitFor('the warning', () =>
      first.logs.find((l) => l.msg.startsWith('WARNING: kinesis.spout.applicationName is not set')),
    );
    expect(warning.level).toBe(3);
    expect(warning?.msg).toContain(`defaults to the topology name "${topology}"`);
    await pumpUntil(first, 'every record', () => new Set(idsOf(first.emits)).size >= put.length, 30_000);
    const fresh = await waitFor('the resume points', () =>
      first.logs.find((l) => l.msg.startsWith('where shards resume: ')),
    );
    expect(fresh.msg).toMatch(
      /shardId-000000000000 has no checkpoint: starts TRIM_HORIZON; shardId-000000000001 has no checkpoint: starts TRIM_HORIZON/,
    );
    await waitFor('checkpoints of every record', async () => {
      const base = stateBase(stream, topology);
      const positions = await Promise.all(
        ['shardId-000000000000', 'shardId-000000000001'].map(
          async (id) => (await readJson(suite.services.inspector, `${base}/checkpoints/${id}`))?.position,
        ),
      );
      return positions.every((p) => (p as { kind?: string })?.kind === 'AFTER');
    });
    await first.stop();

    const again = await spout(stream, undefined as unknown as string, { initialPosition: 'LATEST' }, { conf });
    const resumed = await waitFor('the resume points', () =>
      again.logs.find((l) => l.msg.startsWith('where shards resume: ')),
    );
    expect(resumed.msg).toMatch(
      /shardId-000000000000 resumes from its checkpoint \(after \d+\); shardId-000000000001 resumes from its checkpoint \(after \d+\)/,
    );
    const note = await waitFor('the initialPosition note', () =>
      again.logs.find((l) => l.msg.startsWith("initialPosition applies only to the application's first start")),
    );
    expect(note?.msg).toMatch(
      /with TRIM_HORIZON \(recorded in .*\/bootstrap\)\..*The configuration now says LATEST: that has no effect on this application/,
    );
  });
});
