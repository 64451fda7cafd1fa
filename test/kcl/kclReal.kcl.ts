import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutRecordCommand } from '@aws-sdk/client-kinesis';
import { startDynalite, type DynaliteServer } from '../helpers/dynaliteServer';
import { spoutConf, spoutSuite, uniqueName } from '../helpers/fixture';
import { buildKclRunner, startKcl } from '../helpers/kclRunner';
import { createStream, listAllShards, mergeShards, putRecords, splitShard } from '../helpers/kinesisAdmin';
import { kplAggregate } from '../helpers/kpl';
import { expectParentsFirst, idOf, records, runTool } from '../helpers/toolRun';

const suite = spoutSuite();
const dirs: string[] = [];
let dynalite: DynaliteServer;
let classpath: string;
beforeAll(async () => {
  classpath = buildKclRunner();
  dynalite = await startDynalite();
}, 600_000);
afterAll(async () => {
  await dynalite?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('KCL reads part of a stream that split and merged, stops; import; the spout emits exactly the rest, parents first; export; KCL reads exactly what follows', async () => {
  const { client, kinesis } = suite.services;
  const stream = uniqueName('stream');
  await createStream(client, stream, 2);
  const [s0, s1] = (await listAllShards(client, stream)).map((s) => s.ShardId!).sort();
  const before = await putRecords(client, stream, records(30, 'before'));
  const onS1 = before.filter((r) => r.shardId === s1);
  const aggregate = kplAggregate(
    Array.from({ length: 4 }, (_, i) => ({ partitionKey: `before-key-${before.indexOf(onS1[0])}`, data: `kpl-${i}` })),
  );
  const kpl = await client.send(
    new PutRecordCommand({ StreamName: stream, PartitionKey: aggregate.partitionKey, Data: aggregate.data }),
  );
  expect(kpl.ShardId).toBe(s1);
  const kplIds = [0, 1, 2, 3].map((i) => `${s1}:${kpl.SequenceNumber}:${i}`);
  // KCL starts on the two shards and the stream splits and merges while it runs (kinesis-local's ListShards
  // ignores the ShardFilter of KCL's first sync of an empty lease table, and KCL refuses the listing of an
  // already resharded stream as an incomplete hash range). It takes s0 and upper to their ends, lower's
  // first 2 records, s1's plain records and 2 user records of the aggregate (its checkpoint inside it): s1
  // is not finished, so merged is never started.
  const app = uniqueName('kcl');
  const limitsFile = join(mkdtempSync(join(tmpdir(), 'kcl-limits-')), 'limits');
  dirs.push(join(limitsFile, '..'));
  writeFileSync(limitsFile, `${s1}=${onS1.length + 2}\n`);
  const kcl = startKcl(classpath, {
    stream,
    app,
    kinesis: kinesis.endpoint,
    dynamodb: dynalite.endpoint,
    region: kinesis.region,
    failoverMs: 3_000,
    limitsFile,
  });
  const took = (shard: string) => kcl.records.filter((id) => id.startsWith(`${shard}:`)).length;
  const beforeOnS0 = before.filter((r) => r.shardId === s0).length;
  await kcl.waitFor("s0's records", () => took(s0) === beforeOnS0);
  const [lower, upper] = await splitShard(client, stream, s0).then(async (children) => {
    const shards = await listAllShards(client, stream);
    const start = (id: string) => BigInt(shards.find((s) => s.ShardId === id)!.HashKeyRange!.StartingHashKey!);
    return children.sort((a, b) => (start(a) < start(b) ? -1 : 1));
  });
  writeFileSync(limitsFile, `${s1}=${onS1.length + 2}\n${lower}=2\n`);
  const mid = await putRecords(client, stream, records(20, 'mid'));
  const merged = await mergeShards(client, stream, upper, s1);
  const after = await putRecords(client, stream, records(20, 'after'));
  const all = [...before, ...mid, ...after].map(idOf).concat(kplIds);
  const count = (shard: string) => all.filter((id) => id.startsWith(`${shard}:`)).length;
  expect(mid.filter((r) => r.shardId === lower).length).toBeGreaterThanOrEqual(3);
  try {
    await kcl.waitFor(
      'its share of the stream',
      () => kcl.ended.includes(s0) && kcl.ended.includes(upper) && took(lower) === 2 && took(s1) === onS1.length + 2,
    );
    expect(took(s0)).toBe(count(s0));
    expect(kcl.records).toContain(kplIds[1]);
    expect(kcl.records).not.toContain(kplIds[2]);
    const worker = await kcl.worker;

    const config = join(mkdtempSync(join(tmpdir(), 'kcl-real-')), 'spout.json');
    dirs.push(join(config, '..'));
    const spoutApp = uniqueName('app');
    writeFileSync(
      config,
      JSON.stringify({ 'kinesis.spout': spoutConf(suite.services, stream, spoutApp, { initialPosition: 'LATEST' }) }),
    );
    const args = [
      'import',
      '--from',
      'kcl',
      '--source-table',
      app,
      '--source-endpoint',
      dynalite.endpoint,
      '--source-failover-ms',
      '3500',
      '--config',
      config,
    ];
    // KCL running: its leases are renewed within its failover time.
    const live = await runTool([...args, '--yes']);
    expect(live.code).toBe(4);
    expect(live.stderr).toContain('refusing: KCL workers are running');
    expect(live.stderr).toContain(`by ${worker}`);
    await kcl.kill();
    const taken = [...kcl.records];

    const dry = await runTool([...args, '--dry-run']);
    expect(dry.stderr).toBe('');
    expect(dry.stdout).toContain(`${s0}: source: KCL checkpoint SHARD_END -> SHARD_END [write`);
    expect(dry.stdout).toContain(
      `${s1}: source: KCL checkpoint ${kpl.SequenceNumber} sub 1 -> after user record 1 of ${kpl.SequenceNumber} [write`,
    );
    expect(dry.stdout).toContain(`not renewed in 3500 ms (a stopped worker's)`);
    const run = await runTool([...args, '--yes']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('written: 5 checkpoint(s) and the bootstrap.');

    const expected = all.filter((id) => !taken.includes(id)).sort();
    const driver = await suite.spout(stream, spoutApp, { initialPosition: 'LATEST' });
    await driver.pump(() => driver.emits.length >= expected.length, { timeoutMs: 90_000 });
    await driver.pump(() => false, { timeoutMs: 2_000 });
    const emitted = driver.emits.map((e) => e.id);
    expect(new Set(emitted).size).toBe(emitted.length);
    expect([...emitted].sort()).toEqual(expected);
    expectParentsFirst(driver.emits, { [lower]: [s0], [upper]: [s0], [merged]: [upper, s1] });
    await driver.stop();

    // The way back: the spout's checkpoints as a new KCL application's table; KCL reads exactly what follows.
    const later = await putRecords(client, stream, records(16, 'later'));
    const back = uniqueName('back');
    const exported = await runTool([
      'export',
      '--to',
      'kcl',
      '--table',
      back,
      '--endpoint',
      dynalite.endpoint,
      '--create-table',
      '--config',
      config,
      '--yes',
    ]);
    expect(exported.stderr).toBe('');
    expect(exported.stdout).toContain('written: 5 lease(s).');
    const again = startKcl(classpath, {
      stream,
      app: back,
      kinesis: kinesis.endpoint,
      dynamodb: dynalite.endpoint,
      region: kinesis.region,
    });
    try {
      await again.waitFor('the records put after the spout stopped', () => again.records.length >= later.length);
      await new Promise((r) => setTimeout(r, 3_000));
      expect([...again.records].sort()).toEqual(later.map(idOf).sort());
    } finally {
      await again.kill();
    }
  } finally {
    await kcl.kill();
  }
}, 400_000);
