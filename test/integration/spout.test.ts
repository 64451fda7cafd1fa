/** The spout process driven as ShellSpout drives it, against real ZooKeeper and kinesis-local. */
import { DeleteStreamCommand, ListStreamsCommand } from '@aws-sdk/client-kinesis';
import { createStream, listAllShards, putRecords, splitShard, type PutResult } from '../helpers/kinesisAdmin';
import { idsOf, pumpAll, readJson, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import type { Emit } from '../helpers/stormDriver';

const suite = spoutSuite();
const { spout } = suite;

function records(n: number, prefix = 'r', keys = 16): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    partitionKey: `key-${i % keys}`,
    data: JSON.stringify({ n: i, prefix }),
  }));
}

const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;

async function newStream(shards: number): Promise<string> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, shards);
  return stream;
}

/** Collects every acked id; asserts nothing put is missing. */
function expectAllDelivered(put: PutResult[], emits: Emit[]): void {
  const seen = new Set(idsOf(emits));
  const missing = put.map(idOf).filter((id) => !seen.has(id));
  expect(missing).toEqual([]);
}

test('every record put is emitted once, with the declared tuple fields and a shard-tagged message id', async () => {
  const stream = await newStream(2);
  const put = await putRecords(suite.services.client, stream, records(300));
  const driver = await spout(stream, uniqueName('app'));
  await driver.pump(() => new Set(idsOf(driver.emits)).size >= put.length, { timeoutMs: 30_000 });
  expectAllDelivered(put, driver.emits);
  expect(driver.emits).toHaveLength(put.length);
  const byId = new Map(put.map((r, i) => [idOf(r), i]));
  for (const emit of driver.emits) {
    const [partitionKey, data, shardId, sequenceNumber, arrival] = emit.tuple;
    const i = byId.get(emit.id)!;
    expect(partitionKey).toBe(`key-${i % 16}`);
    expect(JSON.parse(data as string)).toEqual({ n: i, prefix: 'r' });
    expect(`${shardId}:${sequenceNumber}`).toBe(emit.id);
    expect(typeof arrival).toBe('number');
    expect(emit.frame.need_task_ids).toBe(false);
    expect('task' in emit.frame).toBe(false);
  }
  expect(driver.errors).toEqual([]);
});

test('acks move the checkpoint; a restarted process resumes after it', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const first = await putRecords(suite.services.client, stream, records(100));
  const driver = await spout(stream, app);
  await driver.pump(() => driver.emits.length >= first.length);
  const [shardId] = (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
  const checkpoint = `${stateBase(stream, app)}/checkpoints/${shardId}`;
  await waitFor(
    'checkpoint after the last ack',
    async () =>
      ((await readJson(suite.services.inspector, checkpoint))?.position as { sequenceNumber?: string })
        ?.sequenceNumber === first[99].sequenceNumber,
  );
  await driver.stop();

  const second = await putRecords(suite.services.client, stream, records(50, 's'));
  const restarted = await spout(stream, app);
  await restarted.pump(() => restarted.emits.length >= second.length);
  await new Promise((r) => setTimeout(r, 500));
  await restarted.next();
  expect(idsOf(restarted.emits)).toEqual(second.map(idOf));
});

test('a process killed before its first checkpoint, with LATEST, loses nothing written after the first start', async () => {
  const stream = await newStream(2);
  const app = uniqueName('app');
  await putRecords(suite.services.client, stream, records(20, 'before'));
  const driver = await spout(stream, app, { initialPosition: 'LATEST' });
  await waitFor('leases taken', () => driver.logs.filter((l) => l.msg.includes('lease on')).length === 2);
  const put = await putRecords(suite.services.client, stream, records(60, 'after'));
  // Emitted but never acked: no checkpoint has moved when the process dies.
  await driver.pump(() => driver.emits.length >= 10, { onEmit: () => undefined });
  driver.signal('SIGKILL');
  await driver.exited;

  const restarted = await spout(stream, app, { initialPosition: 'LATEST' });
  await restarted.pump(() => new Set(idsOf(restarted.emits)).size >= put.length, { timeoutMs: 40_000 });
  expectAllDelivered(put, restarted.emits);
  expect(restarted.emits.map((e) => JSON.parse(e.tuple[1] as string).prefix)).not.toContain('before');
});

test('failed tuples are re-emitted with the same id until acked; a finite retry limit reports and skips', async () => {
  const stream = await newStream(1);
  const put = await putRecords(suite.services.client, stream, records(30));
  const driver = await spout(stream, uniqueName('app'), { retry: { initialBackoffMs: 10, maxBackoffMs: 50 } });
  const failedOnce = new Set<string>();
  const acked = new Set<string>();
  await driver.pump(() => acked.size >= put.length, {
    onEmit: async (emit) => {
      if (!failedOnce.has(emit.id)) {
        failedOnce.add(emit.id);
        await driver.fail(emit.id);
      } else {
        acked.add(emit.id);
        await driver.ack(emit.id);
      }
    },
  });
  expect([...acked].sort()).toEqual(put.map(idOf).sort());
  expect(driver.emits).toHaveLength(2 * put.length);

  const limited = await spout(stream, uniqueName('app'), {
    retry: { maxRetries: 1, initialBackoffMs: 10, maxBackoffMs: 50 },
  });
  await limited.pump(() => limited.errors.length >= put.length, { onEmit: (emit) => limited.fail(emit.id) });
  expect(limited.emits).toHaveLength(2 * put.length);
  expect(limited.errors[0]).toMatch(/failed 2 time\(s\), over retry.maxRetries=1: skipped/);
});

test('two and three processes share a stream: every shard read, none by two processes at once, balanced', async () => {
  const stream = await newStream(6);
  const app = uniqueName('app');
  const put = await putRecords(suite.services.client, stream, records(600, 'r', 64));
  const group = await Promise.all(
    [1, 2, 3].map((taskId) => spout(stream, app, {}, { taskId, componentTasks: [1, 2, 3] })),
  );
  const emittedAt = new Map<string, { pid: number; at: number }[]>();
  const all = () => group.flatMap((d) => d.emits);
  await pumpAll(
    group,
    () => new Set(idsOf(all())).size >= put.length,
    60_000,
    async (driver, emit) => {
      const shard = emit.id.split(':')[0];
      const list = emittedAt.get(shard) ?? [];
      list.push({ pid: driver.pid, at: performance.now() });
      emittedAt.set(shard, list);
      await driver.ack(emit.id);
    },
  );
  expectAllDelivered(put, all());
  // One reader: per shard, the emits of different processes form disjoint time intervals.
  for (const [shard, list] of emittedAt) {
    const spans = new Map<number, [number, number]>();
    for (const { pid, at } of list) {
      const span = spans.get(pid) ?? [at, at];
      spans.set(pid, [Math.min(span[0], at), Math.max(span[1], at)]);
    }
    const sorted = [...spans.values()].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i += 1)
      expect({ shard, overlap: sorted[i][0] < sorted[i - 1][1] }).toEqual({ shard, overlap: false });
  }
  const leases = async () => {
    const base = stateBase(stream, app);
    const names = await suite.services.inspector.getChildren(`${base}/leases`);
    const owners = await Promise.all(
      names.map(async (n) => (await readJson(suite.services.inspector, `${base}/leases/${n}`))?.owner as string),
    );
    return owners;
  };
  const owners = await waitFor('balanced leases', async () => {
    const list = await leases();
    const counts = [...new Set(list)].map((o) => list.filter((x) => x === o).length);
    return list.length === 6 && counts.length === 3 && Math.max(...counts) - Math.min(...counts) <= 1
      ? list
      : undefined;
  });
  expect(new Set(owners).size).toBe(3);
});

test('deactivate, split, activate: the children are read, nothing lost, parent before child', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const before = await putRecords(suite.services.client, stream, records(100, 'before'));
  const driver = await spout(stream, app);
  await driver.pump(() => driver.emits.length >= before.length);
  await driver.deactivate();
  const [parent] = (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
  const children = await splitShard(suite.services.client, stream, parent);
  const after = await putRecords(suite.services.client, stream, records(200, 'after'));
  expect(new Set(after.map((r) => r.shardId))).toEqual(new Set(children));
  // Storm sends no next while deactivated; acks still arrive.
  await driver.activate();
  await driver.pump(() => new Set(idsOf(driver.emits)).size >= before.length + after.length, { timeoutMs: 30_000 });
  expectAllDelivered([...before, ...after], driver.emits);
  const finished = await suite.services.inspector.getChildren(`${stateBase(stream, app)}/finished`);
  expect(finished).toEqual([parent]);
  const firstChild = driver.emits.findIndex((e) => children.includes(e.id.split(':')[0]));
  expect(driver.emits.slice(firstChild).some((e) => e.id.startsWith(`${parent}:`))).toBe(false);
});

test.each(['SIGTERM', 'EOF'])(
  '%s: checkpoints flushed, leases and membership given up; the process exits once stdin closes',
  async (how) => {
    const stream = await newStream(2);
    const app = uniqueName('app');
    const put = await putRecords(suite.services.client, stream, records(80));
    const driver = await spout(stream, app, { checkpointIntervalMs: 60_000 });
    await driver.pump(() => driver.emits.length >= put.length);
    const base = stateBase(stream, app);
    const started = Date.now();
    if (how === 'SIGTERM') {
      driver.signal('SIGTERM');
      // The supervisor SIGTERMs the worker and its subprocesses at once: the worker may still send commands,
      // and a subprocess gone before it would halt the worker ("Worker died"). Every one is answered.
      await waitFor(
        'leases given up after SIGTERM',
        async () => (await suite.services.inspector.getChildren(`${base}/leases`)).length === 0,
      );
      for (let i = 0; i < 5; i += 1) expect(await driver.next()).toEqual([]);
      await driver.ack(driver.emits[0].id);
      expect(driver.frames.filter((f) => f.command === 'sync').length).toBe(driver.commandCount);
      expect(await Promise.race([driver.exited, new Promise((r) => setTimeout(() => r('running'), 500))])).toBe(
        'running',
      );
    }
    driver.closeStdin();
    const exit = await driver.exited;
    expect(exit.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(how === 'SIGTERM' ? 15_000 : 5_000);
    expect(await suite.services.inspector.getChildren(`${base}/leases`)).toEqual([]);
    expect(await suite.services.inspector.getChildren(`${base}/members`)).toEqual([]);
    for (const shardId of new Set(put.map((r) => r.shardId))) {
      const last = put.filter((r) => r.shardId === shardId).pop()!;
      expect((await readJson(suite.services.inspector, `${base}/checkpoints/${shardId}`))?.position).toEqual({
        kind: 'AFTER',
        sequenceNumber: last.sequenceNumber,
      });
    }
  },
);

test('a bad configuration is reported, with one message naming key, value and what is allowed, and the process stays alive answering Storm', async () => {
  const stream = await newStream(1);
  await putRecords(suite.services.client, stream, records(5));
  const driver = await spout(stream, uniqueName('app'), { dataFormat: 'xml' });
  await waitFor('the error frame', () => driver.errors.length > 0);
  expect(driver.pid).toBeGreaterThan(0);
  // Exiting would make Storm restart the worker again and again, taking its other executors down each time.
  await driver.activate();
  for (let i = 0; i < 20; i += 1) expect(await driver.next()).toEqual([]);
  await driver.ack('shardId-000000000000:1');
  await driver.deactivate();
  expect(driver.frames.filter((f) => f.command === 'sync').length).toBe(driver.commandCount);
  expect(await Promise.race([driver.exited, new Promise((r) => setTimeout(() => r('running'), 1_000))])).toBe(
    'running',
  );
  expect(driver.errors).toHaveLength(1);
  expect(driver.errors[0]).toMatch(
    /^bad configuration: kinesis\.spout\.dataFormat = "xml": allowed: "utf8", "base64", "json"\. This spout task emits nothing until the topology is redeployed with that fixed; it stays alive/,
  );
  expect(driver.logs.map((l) => l.msg)).toContain(driver.errors[0]);
  expect(driver.stderr.join('')).toBe('');
  driver.closeStdin();
  expect((await driver.exited).code).toBe(0);
});

test('output fields that differ from the declared ones are a configuration error', async () => {
  const stream = await newStream(1);
  const driver = await spout(stream, uniqueName('app'), {}, { outputFields: ['partitionKey', 'data'] });
  await driver.activate();
  await driver.next();
  expect(driver.errors[0]).toMatch(/kinesis.spout.outputFields = .*must equal the fields the topology declares/);
  expect(await Promise.race([driver.exited, new Promise((r) => setTimeout(() => r('running'), 500))])).toBe('running');
});

test('acks and fails for unknown ids, and garbage ids, are answered without error', async () => {
  const stream = await newStream(1);
  const driver = await spout(stream, uniqueName('app'));
  await driver.ack('shardId-000000000099:123');
  await driver.fail('nonsense');
  await driver.command({ command: 'ack', id: 42 });
  await driver.command({ command: 'bogus' });
  const frames = driver.frames.filter((f) => f.command === 'sync');
  expect(frames).toHaveLength(4);
  expect(driver.errors).toEqual(['unknown command "bogus"']);
});

test('memory stays bounded: prefetched plus in-flight records never exceed maxRecordsInMemory', async () => {
  const stream = await newStream(4);
  const put = await putRecords(suite.services.client, stream, records(400));
  const cap = 50;
  const driver = await spout(stream, uniqueName('app'), { maxRecordsInMemory: cap, maxRecordsPerRequest: 30 });
  // Nothing acked: the spout can only emit what fits under the cap.
  await driver.pump(() => driver.emits.length >= cap, { onEmit: () => undefined });
  const settle = Date.now() + 1_500;
  await driver.pump(() => Date.now() > settle, { onEmit: () => undefined });
  expect(driver.emits.length).toBeLessThanOrEqual(cap);
  // Acks free room: everything arrives in the end.
  for (const emit of driver.emits) await driver.ack(emit.id);
  await driver.pump(() => new Set(idsOf(driver.emits)).size >= put.length);
  expectAllDelivered(put, driver.emits);
});

describe('when children may be read (ordering)', () => {
  /** Reads a split stream acking nothing from the parent: which children's records come out? */
  async function childrenEmittedWhileParentUnacked(ordering: string): Promise<number> {
    const stream = await newStream(1);
    const [parent] = (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!);
    await putRecords(suite.services.client, stream, records(40, 'parent'));
    const children = await splitShard(suite.services.client, stream, parent);
    await putRecords(suite.services.client, stream, records(40, 'child'));
    const driver = await spout(stream, uniqueName('app'), { ordering });
    const fromChildren = () => driver.emits.filter((e) => children.includes(e.id.split(':')[0])).length;
    const fromParent = () => driver.emits.filter((e) => e.id.startsWith(`${parent}:`)).length;
    const settle = Date.now() + 4_000;
    await driver.pump(() => Date.now() > settle || (fromChildren() >= 40 && fromParent() >= 40), {
      onEmit: (emit) => (emit.id.startsWith(`${parent}:`) ? undefined : driver.ack(emit.id)),
    });
    expect(fromParent()).toBe(40);
    return fromChildren();
  }

  test('parents-acked (default): no child record while a parent record is unacked', async () => {
    expect(await childrenEmittedWhileParentUnacked('parents-acked')).toBe(0);
  });

  test('parents-emitted: children once every parent record was emitted', async () => {
    expect(await childrenEmittedWhileParentUnacked('parents-emitted')).toBe(40);
  });

  test('none: children at once', async () => {
    expect(await childrenEmittedWhileParentUnacked('none')).toBe(40);
  });
});

test('what ZooKeeper holds about shards gone from the stream is removed after two listings', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const base = stateBase(stream, app);
  const driver = await spout(stream, app, { shardSyncIntervalMs: 1_000 });
  await waitFor('lease taken', () => driver.logs.some((l) => l.msg.startsWith('lease on')));
  const ghost = 'shardId-000000099999';
  for (const kind of ['checkpoints', 'finished'])
    await suite.services.inspector.create(`${base}/${kind}/${ghost}`, Buffer.from('{"v":1}'), 'persistent');
  await driver.pump(
    () => driver.logs.some((l) => l.msg.includes(`forgot 1 shard(s) no longer in the stream: ${ghost}`)),
    { timeoutMs: 30_000 },
  );
  expect(await suite.services.inspector.getChildren(`${base}/checkpoints`)).not.toContain(ghost);
  expect(await suite.services.inspector.getChildren(`${base}/finished`)).toEqual([]);
  // The live shard's checkpoint is kept.
  expect(await suite.services.inspector.getChildren(`${base}/checkpoints`)).toHaveLength(1);
});

test('a stream deleted and re-created under the same name is refused with a clear message', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const first = await spout(stream, app);
  await waitFor('bootstrap and lease', () => first.logs.some((l) => l.msg.startsWith('lease on')));
  await first.stop();
  await suite.services.client.send(new DeleteStreamCommand({ StreamName: stream }));
  await waitFor(
    'the stream gone',
    async () => (await suite.services.client.send(new ListStreamsCommand({}))).StreamNames?.includes(stream) === false,
  );
  await new Promise((r) => setTimeout(r, 1_100)); // a creation time that differs at second resolution too
  await createStream(suite.services.client, stream, 1);
  await putRecords(suite.services.client, stream, records(5));
  const second = await spout(stream, app);
  await waitFor('the refusal', () => second.errors.some((e) => e.startsWith('refusing to read')), 15_000);
  expect(second.errors[0]).toMatch(
    /was deleted and re-created: remove that ZooKeeper path to start over, or use another applicationName/,
  );
  await second.pump(() => false, { timeoutMs: 1_000 });
  expect(second.emits).toEqual([]);
});

test('a stream deleted and re-created while the process runs is refused, nothing of the new stream emitted', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const first = await putRecords(suite.services.client, stream, records(20));
  const driver = await spout(stream, app);
  await driver.pump(() => driver.emits.length >= first.length);
  await suite.services.client.send(new DeleteStreamCommand({ StreamName: stream }));
  await waitFor(
    'the stream gone',
    async () => (await suite.services.client.send(new ListStreamsCommand({}))).StreamNames?.includes(stream) === false,
  );
  await new Promise((r) => setTimeout(r, 1_100)); // a creation time that differs at second resolution too
  await createStream(suite.services.client, stream, 1);
  await putRecords(suite.services.client, stream, records(5, 'new'));
  const emitted = driver.emits.length;
  await driver.pump(() => driver.errors.some((e) => e.startsWith('refusing to read')), { timeoutMs: 20_000 });
  expect(driver.errors.find((e) => e.startsWith('refusing to read'))).toMatch(/was deleted and re-created/);
  await driver.pump(() => false, { timeoutMs: 1_000 });
  expect(driver.emits.length).toBe(emitted);
  // Its checkpoints stay as they were: nothing is marked finished for the old stream's shards.
  expect(await suite.services.inspector.getChildren(`${stateBase(stream, app)}/finished`)).toEqual([]);
});
