/**
 * The simulation's own parts behave as the real things do in what the code relies on: the loop runs
 * every promise callback between two timers and breaks ties in order; the ZooKeeper fake applies
 * transactions atomically, deletes an expired session's ephemerals and fires one-shot watches; the
 * Kinesis fake ends a closed shard; one seed gives one trace.
 */
import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand } from '@aws-sdk/client-kinesis';
import { NO_FAULTS, FaultPlan } from './faults';
import { simulate } from './harness';
import { SimKinesis } from './kinesis/simKinesis';
import { SimStream } from './kinesis/simStream';
import { Random } from './random';
import { Owner, SimLoop, VirtualScheduler } from './virtualTime';
import { SimZooKeeper } from './zooKeeper/zkClient';
import { ZkServer } from './zooKeeper/zkServer';

const calm = () => new FaultPlan(new Random(1, 'test'), { ...NO_FAULTS });

describe('virtual time', () => {
  it('runs a long chain of awaits to its end before the next timer', async () => {
    const loop = new SimLoop();
    const owner = new Owner('a');
    const seen: string[] = [];
    loop.after(owner, 1, () => {
      void (async () => {
        for (let i = 0; i < 1_000; i += 1) await Promise.resolve();
        seen.push('chain done');
      })();
    });
    loop.after(owner, 1, () => seen.push('next timer'));
    await loop.run(10, () => undefined);
    expect(seen).toEqual(['chain done', 'next timer']);
  });

  it('breaks ties in scheduling order, freezes a paused owner and drops a dead one', async () => {
    const loop = new SimLoop();
    const a = new Owner('a');
    const b = new Owner('b');
    const c = new Owner('c');
    const seen: string[] = [];
    for (const name of ['a1', 'a2', 'a3']) loop.after(a, 5, () => seen.push(`${name}@${loop.now}`));
    loop.after(b, 5, () => seen.push(`b@${loop.now}`));
    loop.after(c, 5, () => seen.push(`c@${loop.now}`));
    b.state = { kind: 'paused', until: 50 };
    c.state = { kind: 'dead' };
    await loop.run(100, () => undefined);
    expect(seen).toEqual(['a1@5', 'a2@5', 'a3@5', 'b@50']);
  });

  it('sleeps on the virtual clock and wakes at once when aborted', async () => {
    const loop = new SimLoop();
    const scheduler = new VirtualScheduler(loop, new Owner('a'), new Random(1), 0);
    const woke: number[] = [];
    const abort = new AbortController();
    void scheduler.sleep(1_000).then(() => woke.push(loop.now));
    void scheduler.sleep(1_000, abort.signal).then(() => woke.push(loop.now));
    loop.after(new Owner('b'), 10, () => abort.abort());
    await loop.run(5_000, () => undefined);
    expect(woke).toEqual([10, 1_000]);
  });
});

describe('in-memory ZooKeeper', () => {
  function setup() {
    const loop = new SimLoop();
    const server = new ZkServer(loop, new Owner('zk'), () => undefined);
    const hooks = { trace: () => undefined, watchers: () => undefined };
    const client = (name: string, states: string[] = []) =>
      new SimZooKeeper(
        loop,
        new Owner(name),
        server,
        calm(),
        { connect: 'sim', sessionTimeoutMs: 1_000, onState: (s) => states.push(s) },
        hooks,
      );
    const settle = () => loop.run(loop.now + 50, () => undefined);
    return { loop, server, client, settle };
  }

  it('applies a transaction whole or not at all', async () => {
    const { server, client, settle } = setup();
    const zk = client('a');
    const done = (async () => {
      await zk.mkdirp('/app/leases');
      await zk.create('/app/cp', Buffer.from('1'), 'persistent');
      const failed = await zk.transaction([
        { op: 'set', path: '/app/cp', data: Buffer.from('2'), version: 0 },
        { op: 'create', path: '/app/leases/s', data: Buffer.from('x') },
        { op: 'check', path: '/app/cp', version: 7 },
      ]);
      const applied = await zk.transaction([
        { op: 'set', path: '/app/cp', data: Buffer.from('3'), version: 0 },
        { op: 'create', path: '/app/leases/s', data: Buffer.from('x') },
      ]);
      return { failed, applied };
    })();
    for (let i = 0; i < 10; i += 1) await settle();
    expect(await done).toEqual({ failed: false, applied: true });
    expect(server.node('/app/cp')?.data.toString()).toBe('3');
    expect(server.node('/app/leases/s')).toBeDefined();
  });

  it('deletes the ephemerals of a session that stops talking, and fires the watches of others', async () => {
    const { loop, server, client, settle } = setup();
    const holderStates: string[] = [];
    const holder = client('holder', holderStates);
    const watcher = client('watcher');
    let fired = 0;
    const done = (async () => {
      await holder.mkdirp('/leases');
      await holder.create('/leases/s', Buffer.from('x'), 'ephemeral');
      await watcher.getChildren('/leases', () => (fired += 1));
    })();
    for (let i = 0; i < 10; i += 1) await settle();
    await done;
    expect(server.node('/leases/s')?.ephemeralOwner).toBe(holder.sessionId);
    // SIGSTOP: its pings stop, the server's clock does not.
    const owner = (holder as unknown as { owner: Owner }).owner;
    owner.state = { kind: 'paused', until: loop.now + 3_000 };
    await loop.run(loop.now + 2_000, () => undefined);
    expect(server.node('/leases/s')).toBeUndefined();
    expect(fired).toBe(1);
    expect(holder.trustedUntil()).toBeLessThan(loop.now);
    await loop.run(loop.now + 2_000, () => undefined);
    expect(holderStates).toEqual(['disconnected', 'expired']);
  });
});

describe('in-memory Kinesis', () => {
  it('returns a closed shard to its end, then no next iterator and its children', async () => {
    const loop = new SimLoop();
    const owner = new Owner('a');
    const stream = new SimStream('s', 0, 1, () => loop.now);
    const first = stream.put('k', 0.5, Buffer.from('a'));
    const [low, high] = stream.split(stream.shards.get(first.shardId)!, 0);
    const kinesis = new SimKinesis(
      loop,
      stream,
      { kinesisRequest: () => 'none', kinesisDelay: () => 1 },
      new Random(1),
      () => undefined,
    );
    const api = kinesis.clientFor(owner);
    const results = (async () => {
      const listed: string[] = [];
      let page = (await api.send(new ListShardsCommand({ StreamName: 's' }))) as {
        Shards: { ShardId: string }[];
        NextToken?: string;
      };
      listed.push(...page.Shards.map((s) => s.ShardId));
      while (page.NextToken) {
        page = (await api.send(new ListShardsCommand({ NextToken: page.NextToken }))) as typeof page;
        listed.push(...page.Shards.map((s) => s.ShardId));
      }
      const { ShardIterator } = (await api.send(
        new GetShardIteratorCommand({ StreamName: 's', ShardId: first.shardId, ShardIteratorType: 'TRIM_HORIZON' }),
      )) as { ShardIterator: string };
      let iterator: string | undefined = ShardIterator;
      const records: string[] = [];
      let children: string[] | undefined;
      while (iterator) {
        const page: {
          Records: { SequenceNumber: string }[];
          NextShardIterator?: string;
          ChildShards?: { ShardId: string }[];
        } = (await api.send(new GetRecordsCommand({ ShardIterator: iterator }))) as never;
        records.push(...page.Records.map((r) => r.SequenceNumber));
        iterator = page.NextShardIterator;
        children = page.ChildShards?.map((c) => c.ShardId);
      }
      return { listed, records, children };
    })();
    await loop.run(1_000, () => undefined);
    const { listed, records, children } = await results;
    expect(listed).toEqual([first.shardId, low.shardId, high.shardId]);
    expect(records).toEqual([first.sequenceNumber]);
    expect(BigInt(first.sequenceNumber) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    if (children) expect(children).toEqual([low.shardId, high.shardId]);
  });
});

describe('simulation', () => {
  it('replays a seed exactly', async () => {
    // Whatever the code under test gets wrong, the run goes on to its end: the trace must be the same.
    const ignore = [
      'one-reader',
      'parents-first',
      'checkpoint-backwards',
      'checkpoint-unacked',
      'finished-unread',
      'memory',
      'duplicate',
      'watch-leak',
      'churn',
      'silent',
      'crash',
      'converged',
    ];
    const trace = async () => {
      const lines: string[] = [];
      await simulate({
        seed: 7,
        echo: (line) => lines.push(line),
        keepTrace: 10,
        ignore,
        chaosMs: 5_000,
        quietMs: 5_000,
      });
      return lines;
    };
    const [first, second] = [await trace(), await trace()];
    expect(first.length).toBeGreaterThan(200);
    expect(second).toEqual(first);
  });
});
