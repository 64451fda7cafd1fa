/** Several Kinesis streams in one spout component (`streams`), driven as ShellSpout drives it, on kinesis-local. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteStreamCommand } from '@aws-sdk/client-kinesis';
import { createStream, listAllShards, mergeShards, openShards, putRecords, splitShard } from '../helpers/kinesisAdmin';
import { spoutConf, spoutSuite, uniqueName, waitFor } from '../helpers/fixture';
import { ENTRY_SCRIPT, type Emit, type StormDriver } from '../helpers/stormDriver';
import { SPOUT_NODE } from '../helpers/spoutNode';
import { parseMessageId } from '../../src/kinesis/records';

const suite = spoutSuite();
const FIELDS = ['streamName', 'shardId', 'sequenceNumber', 'data'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newStreams(shards: number[]): Promise<string[]> {
  const names = shards.map(() => uniqueName('multi'));
  await Promise.all(names.map((name, i) => createStream(suite.services.client, name, shards[i])));
  return names;
}

/** What a record is, whatever its id: its stream, shard and sequence number. */
const recordOf = (emit: Emit) => `${emit.tuple[0]}|${emit.tuple[1]}|${emit.tuple[2]}`;

/** Puts a few records into every stream every 100 ms until stopped; resolves with every record put. */
function produce(streams: string[]): { stop(): Promise<Set<string>> } {
  const put = new Set<string>();
  let running = true;
  let n = 0;
  const loop = (async () => {
    while (running) {
      await Promise.all(
        streams.map(async (stream) => {
          const batch = Array.from({ length: 10 }, () => ({ partitionKey: `k${n++ % 31}`, data: `${stream}:${n}` }));
          for (const r of await putRecords(suite.services.client, stream, batch))
            put.add(`${stream}|${r.shardId}|${r.sequenceNumber}`);
        }),
      );
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return put;
    },
  };
}

const METRICS = { version: 1, process: 'kinesis-spout', shards: 'kinesis-spout-shards', intervalSecs: 1 };

function startTask(conf: Record<string, unknown>, taskId: number, tasks: number[]): Promise<StormDriver> {
  return suite.spout('unused', 'unused', conf, {
    taskId,
    componentTasks: tasks,
    outputFields: FIELDS,
    streams: { second: FIELDS },
    conf: { 'kinesis.spout.metrics': METRICS },
  });
}

/** A spout configuration reading `entries` (the `streams` key) as application `app`, with FIELDS. */
function streamsConf(app: string, entries: { streamName: string; outputStream?: string }[]) {
  return {
    ...spoutConf(suite.services, entries[0].streamName, app),
    streamName: undefined,
    outputFields: FIELDS,
    streams: entries,
  };
}

/** Pumps each driver (acking every emit) until `done`, in the background. */
function pumpUntil(drivers: StormDriver[], done: () => boolean): Promise<boolean[]> {
  return Promise.all(drivers.map((d) => d.pump(done, { timeoutMs: 60_000 })));
}

test('three streams, two tasks, a split and a merge while records flow, a task killed: every record delivered, ids unique and routed', async () => {
  const streams = await newStreams([2, 2, 1]);
  const app = uniqueName('app');
  const conf = streamsConf(app, [
    { streamName: streams[0] },
    { streamName: streams[1], outputStream: 'second' },
    { streamName: streams[2] },
  ]);
  const tasks = [await startTask(conf, 1, [1, 2]), await startTask(conf, 2, [1, 2])];
  const producer = produce(streams);
  let stopped = false;
  const pumping = pumpUntil(tasks, () => stopped);
  await sleep(1_500);
  const [s0parent] = openShards(await listAllShards(suite.services.client, streams[0])).map((s) => s.ShardId!);
  const [a, b] = openShards(await listAllShards(suite.services.client, streams[1])).map((s) => s.ShardId!);
  const [children, merged] = await Promise.all([
    splitShard(suite.services.client, streams[0], s0parent),
    mergeShards(suite.services.client, streams[1], a, b),
  ]);
  await sleep(1_000);
  tasks[1].signal('SIGKILL');
  await tasks[1].exited;
  await sleep(1_000);
  const put = await producer.stop();
  const all = () => tasks.flatMap((t) => t.emits);
  const seen = () => new Set(all().map(recordOf));
  await waitFor('every record put, emitted', () => [...put].every((r) => seen().has(r)), 40_000).catch((err) => {
    throw new Error(`${(err as Error).message}\n--- survivor\n${tasks[0].logText()}`);
  });
  stopped = true;
  await pumping;
  // The killed task had a share of the shards, which the survivor took over.
  expect(tasks[1].emits.length).toBeGreaterThan(0);

  // Each id is one record's; its prefix names the stream the tuple says it came from; each stream on its output stream.
  const byId = new Map<string, string>();
  for (const emit of all()) {
    const record = recordOf(emit);
    expect(byId.get(emit.id) ?? record).toBe(record);
    byId.set(emit.id, record);
    const parsed = parseMessageId(emit.id)!;
    expect(streams[parsed.streamIndex]).toBe(emit.tuple[0]);
    expect(parsed.shardId).toBe(emit.tuple[1]);
    expect(emit.stream ?? 'default').toBe(emit.tuple[0] === streams[1] ? 'second' : 'default');
  }
  // The reshards were read past: children of the split and the merge emitted.
  const shardsOf = (stream: string) =>
    new Set(
      all()
        .filter((e) => e.tuple[0] === stream)
        .map((e) => e.tuple[1]),
    );
  for (const child of children) expect(shardsOf(streams[0]).has(child)).toBe(true);
  expect(shardsOf(streams[1]).has(merged)).toBe(true);
  // Each stream's state under its own base path.
  for (const stream of streams)
    expect((await suite.services.inspector.getChildren(`/it/${app}/${stream}/checkpoints`)).length).toBeGreaterThan(0);
  expect(tasks[0].errors).toEqual([]);
}, 90_000);

test('a missing stream, and one deleted while running, are reported; the stream beside them goes on', async () => {
  const [present, doomed] = await newStreams([1, 1]);
  const missing = uniqueName('missing');
  const conf = streamsConf(uniqueName('app'), [
    { streamName: present },
    { streamName: missing },
    { streamName: doomed },
  ]);
  const [task] = [await startTask(conf, 1, [1])];
  const first = await putRecords(suite.services.client, present, [{ partitionKey: 'k', data: 'before' }]);
  await putRecords(suite.services.client, doomed, [{ partitionKey: 'k', data: 'doomed' }]);
  const seen = (data: string) => task.emits.some((e) => e.tuple[3] === data);
  expect(await task.pump(() => seen('before') && seen('doomed'), { timeoutMs: 20_000 })).toBe(true);
  expect(task.emits.find((e) => e.tuple[3] === 'before')?.tuple[2]).toBe(first[0].sequenceNumber);
  expect(await task.pump(() => task.errors.some((e) => e.includes(missing)), { timeoutMs: 20_000 })).toBe(true);
  expect(task.errors.find((e) => e.includes(missing))).toMatch(/is not there/);

  await suite.services.client.send(new DeleteStreamCommand({ StreamName: doomed }));
  expect(await task.pump(() => task.errors.some((e) => e.includes(doomed)), { timeoutMs: 30_000 })).toBe(true);
  await putRecords(suite.services.client, present, [{ partitionKey: 'k', data: 'after' }]);
  expect(await task.pump(() => seen('after'), { timeoutMs: 20_000 })).toBe(true);
}, 90_000);

test("status shows every stream, reset needs --stream and moves only that stream's checkpoints", async () => {
  const streams = await newStreams([1, 1]);
  const app = uniqueName('app');
  const conf = streamsConf(
    app,
    streams.map((streamName) => ({ streamName })),
  );
  const task = await startTask(conf, 1, [1]);
  for (const stream of streams) await putRecords(suite.services.client, stream, [{ partitionKey: 'k', data: stream }]);
  expect(await task.pump(() => task.emits.length >= 2, { timeoutMs: 20_000 })).toBe(true);
  const checkpointOf = async (stream: string) => {
    const base = `/it/${app}/${stream}/checkpoints`;
    const [shard] = await suite.services.inspector.getChildren(base).catch(() => []);
    const node = shard && (await suite.services.inspector.getData(`${base}/${shard}`));
    return node ? (JSON.parse(node.data.toString()) as { position: { kind: string } }).position.kind : undefined;
  };
  await waitFor('both checkpoints past the records', async () =>
    (await Promise.all(streams.map(checkpointOf))).every((kind) => kind === 'AFTER'),
  );
  await task.stop();
  const dir = mkdtempSync(join(tmpdir(), 'streams-tools-'));
  try {
    const file = join(dir, 'conf.json');
    writeFileSync(file, JSON.stringify({ 'kinesis.spout': conf }));
    const tool = (...args: string[]) =>
      spawnSync(SPOUT_NODE, [ENTRY_SCRIPT, ...args, '--config', file], {
        encoding: 'utf8',
        env: { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', ...process.env },
        timeout: 30_000,
      });
    const status = tool('status', '--json');
    expect(status.status).toBe(0);
    const reports = status.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { application: { stream: string } });
    expect(reports.map((r) => r.application.stream)).toEqual(streams);
    expect(tool('status', '--stream', streams[1], '--json').stdout.trim().split('\n')).toHaveLength(1);
    const refused = tool('reset', '--to', 'TRIM_HORIZON', '--yes');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('--stream <name> is required: the configuration reads several streams');
    const reset = tool('reset', '--stream', streams[1], '--to', 'TRIM_HORIZON', '--yes');
    expect(reset.status).toBe(0);
    expect(await checkpointOf(streams[1])).toBe('TRIM_HORIZON');
    expect(await checkpointOf(streams[0])).toBe('AFTER');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test('fair share over streams: three one-shard streams on two tasks are held two and one, not three and none', async () => {
  const streams = await newStreams([1, 1, 1]);
  const app = uniqueName('app');
  const conf = streamsConf(
    app,
    streams.map((streamName) => ({ streamName })),
  );
  const tasks = await Promise.all([startTask(conf, 1, [1, 2]), startTask(conf, 2, [1, 2])]);
  const holders = async () =>
    Promise.all(
      streams.map(async (stream) => {
        const base = `/it/${app}/${stream}/leases`;
        const [shard] = await suite.services.inspector.getChildren(base).catch(() => []);
        const node = shard && (await suite.services.inspector.getData(`${base}/${shard}`));
        const owner = node ? (JSON.parse(node.data.toString()) as { owner: string }).owner : undefined;
        return owner?.slice(0, owner.indexOf('-'));
      }),
    );
  const held = await waitFor('every stream leased', async () => {
    const owners = await holders();
    return owners.every((o) => o !== undefined) && owners;
  });
  // Held a while: what the assignment settles on, not what the first round took.
  const done = Date.now() + 2_500;
  await Promise.all(tasks.map((t) => t.pump(() => Date.now() > done)));
  const settled = await holders();
  const count = (task: string) => settled.filter((o) => o === task).length;
  expect([count('task0'), count('task1')].sort()).toEqual([1, 2]);
  // Each task's shard metrics are keyed by stream: the same shard id of two streams stays apart.
  const shardKeys = new Set(
    tasks.flatMap((t) =>
      t.metrics
        .filter((m) => m.name === 'kinesis-spout-shards')
        .flatMap((m) => Object.keys((m.params as { gauges: Record<string, number> }).gauges)),
    ),
  );
  for (const stream of streams) expect(shardKeys).toContain(`${stream}/shardId-000000000000.inFlight`);
  const processGauges = tasks.map((t) => {
    const last = t.metrics.filter((m) => m.name === 'kinesis-spout').pop();
    return (last?.params as { gauges: Record<string, number> } | undefined)?.gauges.shardsHeld;
  });
  expect(processGauges.sort()).toEqual([1, 2]);
  expect(held).toBeDefined();
  for (const task of tasks) expect(task.errors).toEqual([]);
}, 60_000);
