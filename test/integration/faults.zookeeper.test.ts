/**
 * ZooKeeper failing the way networks and operators make it fail, with real servers: connections reset at
 * random while records flow and a shard splits, a partition longer than the session timeout at start and
 * while running (a TCP proxy in front of the server), and nodes holding data the spout never wrote. In both
 * read modes: the readers must stop when the session's trust lapses however the records come (a fan-out
 * subscription pushes them whatever ZooKeeper says).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { listAllShards, openShards, splitShard } from '../helpers/kinesisAdmin';
import { memberSessions, stateBase, uniqueName, waitFor, zooKeeperZxid } from '../helpers/fixture';
import type { Flow } from '../helpers/flow';
import { FLOW_FAN_OUT, flowSuite, readModes } from '../helpers/flowSuite';
import { freePort } from '../helpers/ports';
import { expectFlowInvariants, sleep } from '../helpers/flowChecks';
import { startHttpFaultProxy } from '../helpers/httpFaultProxy';
import type { StormDriver } from '../helpers/stormDriver';
import { ProxyMode, resetGaps, startTcpProxy, type TcpProxy } from '../helpers/tcpProxy';

/** Replay a failing run with FAULT_SEED=<seed>. */
const SEED = Number(process.env.FAULT_SEED ?? 20_261_201);

const zookeeperAt = (connectString: string, sessionTimeoutMs: number) => ({
  zookeeper: { connect: connectString, sessionTimeoutMs, root: '/it' },
});

/** A wait's failure with the processes' logs. */
const withLogs = (flow: Flow) => (err: Error) => {
  throw new Error(`${err.message}\n${flow.logs()}`);
};

/** Session ids a process joined with, in order, from its "joined as" log lines. */
function joinedSessions(driver: StormDriver): string[] {
  return driver.logs
    .map((l) => /^joined as .*ZooKeeper session (\w+)/.exec(l.msg)?.[1])
    .filter((s): s is string => s !== undefined);
}

describe('the TCP proxy', () => {
  const opened: TcpProxy[] = [];
  const proxyTo = async (port: number) => {
    const proxy = await startTcpProxy(port);
    opened.push(proxy);
    return proxy;
  };
  afterEach(async () => {
    for (const proxy of opened.splice(0)) await proxy.close();
  });
  let echo: Server;
  let echoPort: number;
  beforeAll(async () => {
    echo = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.pipe(socket);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoPort = (echo.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => echo.close(() => resolve()));
  });

  interface Client {
    socket: Socket;
    received: () => string;
    ended: Promise<string>;
  }
  async function client(port: number): Promise<Client> {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const ended = new Promise<string>((resolve) => {
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      socket.on('close', () => resolve('closed'));
    });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    return { socket, received: () => received, ended };
  }

  test('resetAll resets every open connection at once; new ones pass', async () => {
    const proxy = await proxyTo(echoPort);
    const [a, b] = [await client(proxy.port), await client(proxy.port)];
    a.socket.write('ping');
    await waitFor('the echo', () => a.received() === 'ping', 2_000);
    expect(proxy.resetAll()).toBe(2);
    expect(await a.ended).toBe('ECONNRESET');
    expect(await b.ended).toBe('ECONNRESET');
    const c = await client(proxy.port);
    c.socket.write('again');
    await waitFor('the echo after the reset', () => c.received() === 'again', 2_000);
    c.socket.destroy();
  });

  test('blackhole drops bytes both ways without closing; restore resets what lost bytes and passes the rest', async () => {
    const proxy = await proxyTo(echoPort);
    const [talker, quiet] = [await client(proxy.port), await client(proxy.port)];
    proxy.blackhole();
    expect(proxy.mode).toBe(ProxyMode.Blackholed);
    talker.socket.write('lost');
    const held = await client(proxy.port);
    held.socket.write('also lost');
    await sleep(300);
    expect([talker.received(), held.received()]).toEqual(['', '']);
    expect(proxy.open).toBe(3);
    proxy.restore();
    expect(await talker.ended).toBe('ECONNRESET');
    expect(await held.ended).toBe('ECONNRESET');
    quiet.socket.write('still here');
    await waitFor('the quiet connection to carry on', () => quiet.received() === 'still here', 2_000);
    quiet.socket.destroy();
  });

  test('pause holds bytes and resume delivers them', async () => {
    const proxy = await proxyTo(echoPort);
    const a = await client(proxy.port);
    proxy.pause();
    a.socket.write('later');
    await sleep(200);
    expect(a.received()).toBe('');
    proxy.resume();
    await waitFor('the held bytes', () => a.received() === 'later', 2_000);
    a.socket.destroy();
  });

  test('random resets: the same seed gives the same gaps, within bounds; a bounded run that stops by itself', async () => {
    const plan = { seed: 3, resets: 20, minGapMs: 50, maxGapMs: 400 };
    const gaps = resetGaps(plan);
    expect(resetGaps(plan)).toEqual(gaps);
    expect(resetGaps({ ...plan, seed: 4 })).not.toEqual(gaps);
    expect(gaps.every((g) => g >= 50 && g <= 400)).toBe(true);
    expect(new Set(gaps).size).toBeGreaterThan(10);

    const proxy = await proxyTo(echoPort);
    const a = await client(proxy.port);
    const counts = await proxy.resetRandomly({ seed: 9, resets: 3, minGapMs: 10, maxGapMs: 30 }).done;
    expect(counts).toEqual([1, 0, 0]);
    expect(await a.ended).toBe('ECONNRESET');
    const stopped = proxy.resetRandomly({ seed: 9, resets: 1000, minGapMs: 10_000, maxGapMs: 20_000 });
    stopped.stop();
    expect(await stopped.done).toEqual([]);
  });
});

describe.each(readModes())('read mode %s', (readMode) => {
  const suite = flowSuite({ readMode, fanOut: FLOW_FAN_OUT });

  const newStream = (shards: number) => suite.newStream(shards);

  async function openShardIds(stream: string): Promise<string[]> {
    return openShards(await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
  }

  test(`ZooKeeper connections reset at random while records flow and a shard splits: sessions survive, nothing lost (seed ${SEED})`, async () => {
    const proxy = suite.closeAfter(await startTcpProxy(suite.services.zk.port));
    const stream = await newStream(3);
    const app = uniqueName('app');
    const base = stateBase(stream, app);
    const flow = suite.flow(stream, zookeeperAt(`127.0.0.1:${proxy.port}`, 4_000), app);
    const spouts = [await flow.addSpout(), await flow.addSpout()];
    await waitFor(
      'both processes to join',
      async () => (await memberSessions(suite.services.inspector, base)).length === 2,
      15_000,
    );
    const sessions = await memberSessions(suite.services.inspector, base);
    flow.startProducer(40, 100);
    // Gaps well under the session timeout: each reset costs a reconnect, never the session.
    const resets = proxy.resetRandomly({ seed: SEED, resets: 14, minGapMs: 300, maxGapMs: 1_200 });
    await sleep(2_500);
    const [parent] = await openShardIds(stream);
    const children = await splitShard(suite.services.client, stream, parent);
    const counts = await resets.done;
    expect(counts.filter((n) => n > 0).length).toBeGreaterThanOrEqual(10);
    // Every reset was followed by reconnections through the proxy.
    expect(proxy.accepted).toBeGreaterThanOrEqual(2 + counts.filter((n) => n > 0).length);
    await sleep(1_000);
    await expectFlowInvariants(flow, { maxDuplicates: 300, withinMs: 20_000 });

    expect(children.every((c) => flow!.emitSpans.has(c))).toBe(true);
    // With the processes' logs when a session was lost (why: starved, or a reconnect that came too late).
    expect({ sessions: await memberSessions(suite.services.inspector, base), logs: '' }).toEqual({
      sessions,
      logs: spouts.some((s) => joinedSessions(s).length !== 1) ? flow.logs() : '',
    });
    for (const spout of spouts) expect(spout.logText()).not.toMatch(/expired:/);
  });

  /**
   * A partition longer than the session timeout (2 s) while a process starts: cut by `partition` once the
   * process is up, then healed. The process must join and read everything put before and after.
   */
  async function joinsAfterPartitionAtStart(
    proxy: TcpProxy,
    partition: (zk: TcpProxy) => Promise<unknown> | undefined,
    overrides: Record<string, unknown> = {},
  ): Promise<void> {
    const stream = await newStream(2);
    const flow = suite.flow(stream, { ...zookeeperAt(`127.0.0.1:${proxy.port}`, 2_000), ...overrides });
    await flow.putBatch(200);
    const spout = await flow.addSpout();
    await partition(proxy);
    await sleep(5_000);
    expect(proxy.mode).toBe(ProxyMode.Blackholed);
    expect(spout.emitCount).toBe(0);
    proxy.restore();
    const restoredAt = performance.now();
    await waitFor('the process to join', () => joinedSessions(spout).length > 0, 12_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${flow!.logs()}`);
    });
    flow.startProducer(40, 100);
    await sleep(1_500);
    await expectFlowInvariants(flow, { withinMs: 15_000 });
    expect(Math.min(...spout.emits.map((e) => e.receivedAt))).toBeGreaterThan(restoredAt);
  }

  test('ZooKeeper unreachable past the session timeout before the process ever connected: it joins once it can, and reads everything', async () => {
    const proxy = suite.closeAfter(await startTcpProxy(suite.services.zk.port));
    proxy.blackhole();
    await joinsAfterPartitionAtStart(proxy, () =>
      waitFor('a connection to the proxy', () => proxy!.accepted > 0, 5_000),
    );
  });

  test("ZooKeeper cut off past the session timeout right after the session is established, with the join's first request in flight: it joins again", async () => {
    const proxy = suite.closeAfter(await startTcpProxy(suite.services.zk.port));
    proxy.blackholeAfterNextReply();
    await joinsAfterPartitionAtStart(proxy, () =>
      waitFor('the session to be established', () => proxy!.mode === ProxyMode.Blackholed, 5_000),
    );
  });

  test('ZooKeeper cut off past the session timeout between the requests of the join: it joins again, and reads everything', async () => {
    // The join asks Kinesis about the stream between two ZooKeeper requests: held there, the connection is
    // reset and blackholed, so the next request waits in the client for a session that has expired (defect 3).
    const kinesisProxy = suite.closeAfter(await startHttpFaultProxy(suite.services.kinesis.endpoint));
    const { endpoint } = await suite.through(kinesisProxy);
    const describe = kinesisProxy.inject({ operations: ['DescribeStreamSummary'], times: 1, delayMs: 1_000 });
    await joinsAfterPartitionAtStart(
      suite.closeAfter(await startTcpProxy(suite.services.zk.port)),
      async (zk) => {
        await waitFor('the join to ask Kinesis', () => describe.injected > 0, 5_000);
        zk.blackhole();
        expect(zk.resetAll()).toBeGreaterThan(0);
      },
      { endpoint },
    );
  });

  // Once: a process that never joins holds no shard, so it makes no reader of either mode.
  if (readMode === 'polling')
    test('ZooKeeper that nobody answers at the configured address: the Storm UI is told within seconds, naming the address, and Storm is still answered', async () => {
      const nobody = await freePort();
      const flow = suite.flow(await newStream(1), zookeeperAt(`127.0.0.1:${nobody}`, 2_000));
      const spout = await flow.addSpout();
      await waitFor(
        'the error in Storm',
        () => spout.errors.some((e) => e.includes('cannot join ZooKeeper') && e.includes(`127.0.0.1:${nobody}`)),
        20_000,
      );
      expect(spout.errors[0]).toMatch(
        /nothing listens at 127.0.0.1:\d+ \(connection refused\).*Check kinesis.spout.zookeeper.connect/,
      );
      await spout.next();
      expect(spout.emitCount).toBe(0);
    });

  test('a process cut off from ZooKeeper past its session timeout stops emitting, rejoins with a new session, and nothing is lost', async () => {
    const proxy = suite.closeAfter(await startTcpProxy(suite.services.zk.port));
    const stream = await newStream(4);
    const sessionTimeoutMs = 2_000;
    const flow = suite.flow(stream, zookeeperAt(`127.0.0.1:${proxy.port}`, sessionTimeoutMs));
    const cut = await flow.addSpout();
    // The other process reaches ZooKeeper directly and keeps running throughout.
    flow.overrides.zookeeper = zookeeperAt(suite.services.zk.connectString, sessionTimeoutMs).zookeeper;
    const survivor = await flow.addSpout();
    flow.startProducer(40, 100);
    await waitFor('both processes to emit', () => cut.emitCount > 0 && survivor.emitCount > 0, 15_000);
    await sleep(1_000);
    const [firstSession] = joinedSessions(cut);

    proxy.blackhole();
    const cutAt = performance.now();
    await waitFor(
      'the survivor to take every shard',
      () => survivor.logs.filter((l) => /^lease on \S+ taken/.test(l.msg)).length >= 4,
      20_000,
    );
    await sleep(Math.max(0, cutAt + 2.5 * sessionTimeoutMs - performance.now()));
    proxy.restore();
    const restoredAt = performance.now();

    await waitFor('the cut-off process to rejoin with a new session', () => joinedSessions(cut).length >= 2, 15_000);
    expect(joinedSessions(cut)[1]).not.toBe(firstSession);
    expect(cut.logText()).toMatch(/expired/);
    await sleep(2_500);
    await expectFlowInvariants(flow, { maxDuplicates: 4 * 100 + 200, withinMs: 20_000 });
    // Trust lapses within the session timeout of the last reply: nothing emitted after that while cut off.
    const whileCut = cut.emits.filter((e) => e.receivedAt > cutAt + sessionTimeoutMs && e.receivedAt < restoredAt);
    expect(whileCut.map((e) => e.id)).toEqual([]);
    // Back with its fair share.
    expect(cut.emits.some((e) => e.receivedAt > restoredAt)).toBe(true);
  });

  describe('data in ZooKeeper the spout never wrote', () => {
    const NOT_JSON = Buffer.from('{this is not json');
    const NO_VERSION = Buffer.from(JSON.stringify({ owner: 'someone-by-hand' }));
    const UNLISTED = 'shardId-000000009999';

    /** Writes without reading: the counter of applied transactions over a quiet time, once the flow is idle. */
    async function writesWhileIdle(ms: number): Promise<number> {
      const before = await zooKeeperZxid(suite.services.zk);
      await sleep(ms);
      return (await zooKeeperZxid(suite.services.zk)) - before;
    }

    /** Every record put on `shards` was delivered. */
    function missingOn(f: Flow, shards: string[]): string[] {
      return f.missing().filter((id) => shards.includes(id.split(':')[0]));
    }

    test('written before the start: each bad node reported by path, other shards read, no spinning', async () => {
      const stream = await newStream(4);
      const app = uniqueName('app');
      const base = stateBase(stream, app);
      const [badCheckpoint, badLease, ...good] = await openShardIds(stream);
      for (const kind of ['checkpoints', 'leases']) await suite.services.inspector.mkdirp(`${base}/${kind}`);
      await suite.services.inspector.create(`${base}/checkpoints/${badCheckpoint}`, NOT_JSON, 'persistent');
      await suite.services.inspector.create(`${base}/leases/${badLease}`, NO_VERSION, 'persistent');
      await suite.services.inspector.create(`${base}/leases/${UNLISTED}`, NO_VERSION, 'persistent');

      const flow = suite.flow(stream, {}, app);
      const spout = await flow.addSpout();
      flow.startProducer(40, 100);
      await sleep(3_000);
      await flow.stopProducer();
      await waitFor(`every record of ${good.join(', ')}`, () => missingOn(flow!, good).length === 0, 15_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}: ${missingOn(flow!, good).length} missing\n${flow!.logs()}`);
        },
      );
      for (const path of [
        `${base}/checkpoints/${badCheckpoint}`,
        `${base}/leases/${badLease}`,
        `${base}/leases/${UNLISTED}`,
      ]) {
        expect(spout.errors.join('\n')).toContain(path);
      }
      expect(await writesWhileIdle(3_000)).toBeLessThan(20);
      // Rate-limited, and the operator's nodes are left as they are.
      expect(spout.errors.length).toBeLessThan(30);
      const checkpoint = await suite.services.inspector.getData(`${base}/checkpoints/${badCheckpoint}`);
      expect(checkpoint?.data.toString('utf8')).toBe(NOT_JSON.toString('utf8'));
      expect(checkpoint?.version).toBe(0);
      expect(flow.orderViolations()).toEqual([]);
    });

    test('a checkpoint that is not JSON, written while running for a shard about to appear: reported, skipped, no spinning', async () => {
      const stream = await newStream(2);
      const app = uniqueName('app');
      const base = stateBase(stream, app);
      const flow = suite.flow(stream, { statsIntervalMs: 1_000 }, app);
      const spout = await flow.addSpout();
      flow.startProducer(40, 100);
      await waitFor('records flowing', () => flow!.emitted > 50, 15_000).catch(withLogs(flow));
      // kinesis-local numbers shards in order: splitting one of two makes shardId-…02 and …03.
      const [, parent] = await openShardIds(stream);
      const doomed = 'shardId-000000000002';
      await suite.services.inspector.create(`${base}/checkpoints/${doomed}`, NOT_JSON, 'persistent');
      const children = await splitShard(suite.services.client, stream, parent);
      expect(children).toContain(doomed);
      await sleep(2_500);
      await flow.stopProducer();
      const readable = (await listAllShards(suite.services.client, stream))
        .map((s) => s.ShardId!)
        .filter((s) => s !== doomed);
      await waitFor('every record outside the bad shard', () => missingOn(flow!, readable).length === 0, 15_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}: ${missingOn(flow!, readable).length} missing\n${flow!.logs()}`);
        },
      );
      expect(await writesWhileIdle(3_000)).toBeLessThan(20);
      expect(spout.errors.join('\n')).toContain(`${base}/checkpoints/${doomed}`);
      expect(spout.errors.length).toBeLessThan(30);
      expect(spout.lastStats()?.checkpointWrites ?? 0).toBeLessThan(200);
      expect((await suite.services.inspector.getData(`${base}/checkpoints/${doomed}`))?.version).toBe(0);
      expect(flow.orderViolations()).toEqual([]);
    });

    test('a lease without a version, written while running: reported, and the shards of a split are still taken', async () => {
      const stream = await newStream(2);
      const app = uniqueName('app');
      const base = stateBase(stream, app);
      const flow = suite.flow(stream, {}, app);
      const spout = await flow.addSpout();
      flow.startProducer(40, 100);
      await waitFor('records flowing', () => flow!.emitted > 50, 15_000).catch(withLogs(flow));
      await suite.services.inspector.create(`${base}/leases/${UNLISTED}`, NO_VERSION, 'persistent');
      const [parent] = await openShardIds(stream);
      const children = await splitShard(suite.services.client, stream, parent);
      await sleep(2_000);
      await expectFlowInvariants(flow, { withinMs: 15_000 });
      expect(children.every((c) => flow!.emitSpans.has(c))).toBe(true);
      expect(spout.errors.join('\n')).toContain(`${base}/leases/${UNLISTED}`);
      expect(spout.errors.length).toBeLessThan(30);
    });
  });
});
