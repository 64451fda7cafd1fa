import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  CreateTableCommand,
  DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  type AttributeValue,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { GetRecordsCommand, GetShardIteratorCommand, PutRecordCommand } from '@aws-sdk/client-kinesis';
import { deaggregate } from '../../src/kinesis/aggregation';
import { openLeaseTable } from '../../src/kinesis/kclLeaseTable';
import { runExport } from '../../src/tools/exportKcl';
import type { ToolIo } from '../../src/tools/io';
import { startDynalite, type DynaliteServer } from '../helpers/dynaliteServer';
import { readJson, spoutConf, spoutSuite, stateBase, uniqueName } from '../helpers/fixture';
import {
  createStream,
  listAllShards,
  mergeShards,
  type PutResult,
  putRecords,
  splitShard,
} from '../helpers/kinesisAdmin';
import { kplAggregate } from '../helpers/kpl';
import { ENTRY_SCRIPT } from '../helpers/stormDriver';
import { expectParentsFirst, idOf, records, runShell, runTool } from '../helpers/toolRun';

const suite = spoutSuite();
const dirs: string[] = [];
let dynalite: DynaliteServer;
let dynamo: DynamoDBClient;
beforeAll(async () => {
  dynalite = await startDynalite();
  dynamo = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: dynalite.endpoint,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
});
afterAll(async () => {
  dynamo?.destroy();
  await dynalite?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function configFile(stream: string, app: string, overrides: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'kcl-'));
  dirs.push(dir);
  const file = join(dir, 'spout.json');
  writeFileSync(file, JSON.stringify({ 'kinesis.spout': spoutConf(suite.services, stream, app, overrides) }));
  return file;
}

async function leaseTable(name: string) {
  await dynamo.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [{ AttributeName: 'leaseKey', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'leaseKey', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  // ACTIVE at once with --createTableMs 0, but only once dynalite's timer ran: a write before fails.
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 20, minDelay: 1, maxDelay: 1 }, { TableName: name });
}

/** A lease as KCL's DynamoDBLeaseSerializer.toDynamoRecord writes it. */
async function putLease(
  table: string,
  key: string,
  checkpoint: string,
  sub: number,
  more: { parents?: string[]; owner?: string; counter?: number } = {},
) {
  const item: Record<string, AttributeValue> = {
    leaseKey: { S: key },
    leaseCounter: { N: String(more.counter ?? 1) },
    ownerSwitchesSinceCheckpoint: { N: '0' },
    checkpoint: { S: checkpoint },
    checkpointSubSequenceNumber: { N: String(sub) },
  };
  if (more.owner) item.leaseOwner = { S: more.owner };
  if (more.parents?.length) item.parentShardId = { SS: more.parents };
  await dynamo.send(new PutItemCommand({ TableName: table, Item: item }));
}

async function scan(table: string) {
  const page = await dynamo.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
  return new Map((page.Items ?? []).map((i) => [i.leaseKey.S!, i]));
}

/**
 * Two shards; a KPL aggregate of 4 user records in the second; KCL finished the first (SHARD_END after a
 * split it read to the end), checkpointed the lower child mid-way, and the second shard inside the aggregate
 * (user record 1); then the upper child merged with the second shard.
 */
async function world() {
  const { client } = suite.services;
  const stream = uniqueName('stream');
  await createStream(client, stream, 2);
  const [s0, s1] = (await listAllShards(client, stream)).map((s) => s.ShardId!).sort();
  const before = await putRecords(client, stream, records(30, 'before'));
  const s1Key = before.find((r) => r.shardId === s1)!;
  const aggregate = kplAggregate(
    Array.from({ length: 4 }, (_, i) => ({ partitionKey: `before-key-${before.indexOf(s1Key)}`, data: `kpl-${i}` })),
  );
  const put = await client.send(
    new PutRecordCommand({
      StreamName: stream,
      PartitionKey: aggregate.partitionKey,
      Data: aggregate.data,
      ExplicitHashKey: aggregate.explicitHashKey,
    }),
  );
  // The aggregate goes wherever its key hashes; the test follows it.
  const kplShard = put.ShardId!;
  const kplSeq = put.SequenceNumber!;
  const tail = await putRecords(client, stream, records(10, 'tail'));
  const children = await splitShard(client, stream, s0);
  const shards = await listAllShards(client, stream);
  const start = (id: string) => BigInt(shards.find((s) => s.ShardId === id)!.HashKeyRange!.StartingHashKey!);
  const [lower, upper] = children.sort((a, b) => (start(a) < start(b) ? -1 : 1));
  const mid = await putRecords(client, stream, records(20, 'mid'));
  const merged = await mergeShards(client, stream, upper, s1);
  const after = await putRecords(client, stream, records(20, 'after'));
  const ofLower = mid.filter((r) => r.shardId === lower);
  expect(ofLower.length).toBeGreaterThanOrEqual(3);
  return {
    stream,
    s0,
    s1,
    lower,
    upper,
    merged,
    kplShard,
    kplSeq,
    before,
    tail,
    mid,
    after,
    lowerAt: ofLower[1].sequenceNumber,
  };
}

test('import from a KCL lease table across a split and a merge, KPL inside: dry run, refusal while live, once, exactly what follows, parents first; export back', async () => {
  const { inspector } = suite.services;
  const w = await world();
  const app = uniqueName('app');
  const table = uniqueName('kcl');
  await leaseTable(table);
  // KCL: s0 finished; the lower child read up to its second record; the upper child and the merge not started;
  // s1 inside the aggregate (user record 1 of 4 done).
  expect(w.kplShard).toBe(w.s1);
  const s1At = { seq: w.kplSeq, sub: 1 };
  await putLease(table, w.s0, 'SHARD_END', 0, { owner: 'worker-a', counter: 40 });
  await putLease(table, w.s1, s1At.seq, s1At.sub, { owner: 'worker-a', counter: 41 });
  await putLease(table, w.lower, w.lowerAt, 0, { parents: [w.s0] });
  await putLease(table, w.upper, 'TRIM_HORIZON', 0, { parents: [w.s0] });
  await putLease(table, w.merged, 'TRIM_HORIZON', 0, { parents: [w.s1, w.upper] });
  const config = configFile(w.stream, app, { initialPosition: 'LATEST' });
  const args = [
    'import',
    '--from',
    'kcl',
    '--source-table',
    table,
    '--source-endpoint',
    dynalite.endpoint,
    '--source-failover-ms',
    '1500',
    '--config',
    config,
  ];

  // A worker still renewing: refused, named, nothing written.
  let counter = 41;
  const renewing = setInterval(() => {
    counter += 1;
    void putLease(table, w.s1, s1At.seq, s1At.sub, { owner: 'worker-b', counter });
  }, 300);
  const live = await runTool([...args, '--yes']).finally(() => clearInterval(renewing));
  expect(live.stderr).toContain(
    `refusing: KCL workers are running (lease(s) renewed within 1500 ms: ${w.s1} by worker-b)`,
  );
  expect(live.code).toBe(4);
  expect(await inspector.getData(`/it/${app}`)).toBeUndefined();
  await new Promise((r) => setTimeout(r, 400));

  const dry = await runTool([...args, '--dry-run']);
  expect(dry.stderr).toBe('');
  expect(dry.code).toBe(0);
  expect(dry.stdout).toContain(`${w.s0}: source: KCL checkpoint SHARD_END -> SHARD_END [write`);
  expect(dry.stdout).toContain(`${w.lower}: source: KCL checkpoint ${w.lowerAt} sub 0 -> after ${w.lowerAt} [write`);
  expect(dry.stdout).toContain(
    `${w.s1}: source: KCL checkpoint ${s1At.seq} sub 1 -> after user record 1 of ${s1At.seq} [write`,
  );
  expect(dry.stdout).toContain(`not renewed in 1500 ms (a stopped worker's): ${w.s0} by worker-a, ${w.s1} by worker-b`);
  expect(dry.stdout).toContain('dry run: nothing written (5 checkpoint(s) would be)');
  expect(await inspector.getData(`/it/${app}`)).toBeUndefined();

  const run = await runTool([...args, '--yes']);
  expect(run.stderr).toBe('');
  expect(run.stdout).toContain('written: 5 checkpoint(s) and the bootstrap.');
  const again = await runTool([...args, '--yes']);
  expect(again.code).toBe(0);
  expect(again.stdout.match(/-> already imported/g)).toHaveLength(5);

  // What follows each KCL checkpoint: nothing of s0; lower after its checkpoint; all of upper and merged;
  // s1 after its checkpoint, and inside the aggregate its user records 2 and 3.
  const all = [...w.before, ...w.tail, ...w.mid, ...w.after];
  const after = (r: PutResult, at: string) => BigInt(r.sequenceNumber) > BigInt(at);
  const expected = all
    .filter(
      (r) =>
        (r.shardId === w.lower && after(r, w.lowerAt)) ||
        r.shardId === w.upper ||
        r.shardId === w.merged ||
        (r.shardId === w.s1 && after(r, s1At.seq)),
    )
    .map(idOf);
  expected.push(`${w.s1}:${w.kplSeq}:2`, `${w.s1}:${w.kplSeq}:3`);
  const driver = await suite.spout(w.stream, app, { initialPosition: 'LATEST' });
  await driver.pump(() => driver.emits.length >= expected.length, { timeoutMs: 90_000 });
  await driver.pump(() => false, { timeoutMs: 2_000 });
  const emitted = driver.emits.map((e) => e.id);
  expect(new Set(emitted).size).toBe(emitted.length);
  expect([...emitted].sort()).toEqual(expected.sort());
  expectParentsFirst(driver.emits, { [w.lower]: [w.s0], [w.upper]: [w.s0], [w.merged]: [w.upper, w.s1] });

  // Export while the spout runs: refused. Then stopped: the spout's checkpoints as KCL leases.
  const exportTable = uniqueName('back');
  const exportArgs = [
    'export',
    '--to',
    'kcl',
    '--table',
    exportTable,
    '--endpoint',
    dynalite.endpoint,
    '--create-table',
    '--config',
    config,
  ];
  const held = await runTool([...exportArgs, '--yes']);
  expect(held.code).toBe(4);
  expect(held.stderr).toContain("refusing: this application's spout is running");
  await driver.stop();
  const newRecords = await putRecords(suite.services.client, w.stream, records(12, 'later'));
  const dryExport = await runTool([...exportArgs, '--dry-run']);
  expect(dryExport.stderr).toBe('');
  expect(dryExport.stdout).toContain('dry run: nothing written (5 lease(s) would be)');
  const exported = await runTool([...exportArgs, '--yes']);
  expect(exported.stderr).toBe('');
  expect(exported.stdout).toContain('written: 5 lease(s).');
  const reexported = await runTool([...exportArgs, '--yes']);
  expect(reexported.stdout.match(/\[already exported\]/g)).toHaveLength(5);
  const leases = await scan(exportTable);
  expect(leases.get(w.s0)?.checkpoint.S).toBe('SHARD_END');
  expect(leases.get(w.merged)?.parentShardId?.SS?.sort()).toEqual([w.s1, w.upper].sort());
  // KCL's resume rule over the exported table: exactly what came after the spout stopped.
  const resumed: string[] = [];
  for (const [shardId, lease] of leases) {
    const cp = lease.checkpoint.S!;
    if (cp === 'SHARD_END') continue;
    const sub = Number(lease.checkpointSubSequenceNumber.N);
    const it = await suite.services.client.send(
      new GetShardIteratorCommand({
        StreamName: w.stream,
        ShardId: shardId,
        ...(/^\d+$/.test(cp)
          ? { ShardIteratorType: 'AT_SEQUENCE_NUMBER', StartingSequenceNumber: cp }
          : { ShardIteratorType: cp as 'TRIM_HORIZON' }),
      }),
    );
    const got = await suite.services.client.send(
      new GetRecordsCommand({ ShardIterator: it.ShardIterator!, Limit: 1000 }),
    );
    for (const r of got.Records ?? []) {
      const parts = deaggregate(r.Data!);
      const count = parts.kind === 'aggregate' ? parts.records.length : 1;
      for (let i = 0; i < count; i += 1) {
        const beyond =
          !/^\d+$/.test(cp) || BigInt(r.SequenceNumber!) > BigInt(cp) || (r.SequenceNumber === cp && i > sub);
        if (beyond)
          resumed.push(
            parts.kind === 'aggregate' ? `${shardId}:${r.SequenceNumber}:${i}` : `${shardId}:${r.SequenceNumber}`,
          );
      }
    }
  }
  expect(resumed.sort()).toEqual(newRecords.map(idOf).sort());
  expect(await readJson(inspector, `${stateBase(w.stream, app)}/checkpoints/${w.s0}`)).toMatchObject({
    position: { kind: 'SHARD_END' },
  });
});

test('export is all or nothing: a lease changed midway undoes the ones written, and puts back the one replaced', async () => {
  process.env.AWS_ACCESS_KEY_ID ??= 'test';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
  const { client } = suite.services;
  const stream = uniqueName('stream');
  await createStream(client, stream, 3);
  const put = await putRecords(client, stream, records(30, 'r'));
  const shards = [...new Set(put.map((r) => r.shardId))].sort();
  const app = uniqueName('app');
  const source = uniqueName('kcl');
  await leaseTable(source);
  for (const shard of shards)
    await putLease(source, shard, put.filter((r) => r.shardId === shard)[1].sequenceNumber, 0);
  const config = configFile(stream, app);
  const imported = await runTool([
    'import',
    '--from',
    'kcl',
    '--source-table',
    source,
    '--source-endpoint',
    dynalite.endpoint,
    '--source-failover-ms',
    '0',
    '--config',
    config,
    '--yes',
  ]);
  expect(imported.stderr).toBe('');

  const target = uniqueName('back');
  await leaseTable(target);
  await putLease(target, shards[0], 'TRIM_HORIZON', 0);
  const before = await scan(target);
  let writes = 0;
  const failing: typeof openLeaseTable = (options) => {
    const table = openLeaseTable(options);
    // The third write finds its lease changed (as if someone wrote it since the plan).
    return { ...table, put: (item, expected) => (++writes === 3 ? Promise.resolve(false) : table.put(item, expected)) };
  };
  const out: string[] = [];
  const err: string[] = [];
  const io: ToolIo = {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    interactive: false,
    readLine: async () => undefined,
    interrupted: () => new Promise(() => undefined),
    now: () => Date.now(),
  };
  const options = {
    config,
    table: target,
    endpoint: dynalite.endpoint,
    createTable: false,
    dryRun: false,
    overwrite: true,
    yes: true,
  };
  await expect(runExport(options, io, failing)).rejects.toThrow(
    `${shards[2]}'s lease changed since the plan was made: the leases written before it were removed, nothing exported`,
  );
  expect(writes).toBe(3 + 1); // three tries, then the replaced one put back (the created one is removed)
  expect(await scan(target)).toEqual(before);
  // The same export, nothing failing: every lease written.
  expect(await runExport(options, io)).toBe(0);
  expect([...(await scan(target)).keys()].sort()).toEqual(shards);
});

test('docs/migration-kcl.md: every node kinesis-spout.cjs command of the page runs as printed', async () => {
  const { client } = suite.services;
  const page = readFileSync(resolve(__dirname, '../../docs/migration-kcl.md'), 'utf8');
  const commands = [...page.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => m[1].split('\n'))
    .map((line) => line.trim())
    .filter((line) => line.startsWith('node kinesis-spout.cjs '));
  expect(commands.length).toBeGreaterThanOrEqual(5);
  // The page's names: its stream, its KCL application, its topology's application.
  await createStream(client, 'clickstream', 2);
  const put = await putRecords(client, 'clickstream', records(20, 'c'));
  await leaseTable('clickstream-kcl');
  const shards = [...new Set(put.map((r) => r.shardId))].sort();
  await putLease('clickstream-kcl', shards[0], put.filter((r) => r.shardId === shards[0])[2].sequenceNumber, 0);
  await putLease('clickstream-kcl', shards[1], 'TRIM_HORIZON', 0);
  const cwd = mkdtempSync(join(tmpdir(), 'kcl-page-'));
  dirs.push(cwd);
  writeFileSync(join(cwd, 'spout.json'), JSON.stringify(spoutConf(suite.services, 'clickstream', 'clickstream-etl')));
  copyFileSync(ENTRY_SCRIPT, join(cwd, 'kinesis-spout.cjs'));
  copyFileSync(join(dirname(ENTRY_SCRIPT), 'kinesis-spout-dynamodb.cjs'), join(cwd, 'kinesis-spout-dynamodb.cjs'));
  const outputs: string[] = [];
  for (const command of commands) {
    const ran = await runShell(command, { cwd, env: { AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint } });
    if (ran.code !== 0) throw new Error(`${command}\nexited ${ran.code}\n${ran.stdout}\n${ran.stderr}`);
    outputs.push(ran.stdout);
  }
  const all = outputs.join('\n');
  expect(all).toContain('written: 2 checkpoint(s) and the bootstrap.');
  expect(all).toContain('written: 2 lease(s).');
  expect([...(await scan('clickstream-kcl-back')).keys()].sort()).toEqual(shards);
});
