import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkpointValue } from '../../src/coordination/storedValues';
import { digestId, isCreatorOnly } from '../../src/coordination/acl';
import { ZkSession } from '../../src/coordination/zk';
import { runImport } from '../../src/tools/import';
import type { ToolIo } from '../../src/tools/io';
import { readJson, spoutConf, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import {
  createStream,
  listAllShards,
  mergeShards,
  type PutResult,
  putRecords,
  splitShard,
} from '../helpers/kinesisAdmin';
import { ENTRY_SCRIPT } from '../helpers/stormDriver';
import { expectParentsFirst, idOf, records, runShell, runTool } from '../helpers/toolRun';

const suite = spoutSuite();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const SOURCES = ['awslabs-storm-spout', 'storm-kinesis'] as const;
type Source = (typeof SOURCES)[number];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'import-'));
  dirs.push(dir);
  return dir;
}

function configFile(stream: string, app: string, overrides: Record<string, unknown> = {}): string {
  const file = join(tempDir(), 'spout.json');
  writeFileSync(file, JSON.stringify({ 'kinesis.spout': spoutConf(suite.services, stream, app, overrides) }));
  return file;
}

/** Where each old spout keeps its state, as the test's topology would have configured it. */
function location(from: Source, stream: string, topology: string) {
  return from === 'awslabs-storm-spout'
    ? {
        root: 'kinesis_storm_spout',
        args: ['--source-topology', topology],
        folder: `/kinesis_storm_spout/${topology}/${stream}`,
      }
    : {
        root: '/committed_sequence_numbers',
        args: ['--source-root', '/committed_sequence_numbers'],
        folder: `/committed_sequence_numbers/${stream}`,
      };
}

/**
 * Writes the old spout's nodes as its code does: awslabs ZookeeperShardState.commitSeqNum (Jackson,
 * `{"checkpoint":...}` at `<folder>/<shardId>/state`), storm-kinesis ZkConnection.commitState (json-simple,
 * `{"committedSequenceNumber":...}` at `<folder>/<shardId>`); both create parents as needed, persistent.
 */
async function writeSourceNodes(zk: ZkSession, from: Source, folder: string, positions: Record<string, string>) {
  for (const [shardId, seq] of Object.entries(positions)) {
    const path = from === 'awslabs-storm-spout' ? `${folder}/${shardId}/state` : `${folder}/${shardId}`;
    const value = from === 'awslabs-storm-spout' ? { checkpoint: seq } : { committedSequenceNumber: seq };
    await zk.mkdirp(path.slice(0, path.lastIndexOf('/')));
    await zk.create(path, Buffer.from(JSON.stringify(value)), 'persistent');
  }
}

/**
 * Two shards read by the old spout up to the middle of each, then a split of the first and a merge of its
 * upper child with the second: the old spout never saw the children.
 */
async function reshardedStream() {
  const { client } = suite.services;
  const stream = uniqueName('stream');
  await createStream(client, stream, 2);
  const [s0, s1] = (await listAllShards(client, stream)).map((s) => s.ShardId!).sort();
  const before = await putRecords(client, stream, records(40, 'before'));
  const positions: Record<string, string> = {};
  for (const shard of [s0, s1]) {
    const own = before.filter((r) => r.shardId === shard);
    expect(own.length).toBeGreaterThanOrEqual(4);
    positions[shard] = own[Math.floor(own.length / 2) - 1].sequenceNumber;
  }
  const [lower, upper] = await splitShard(client, stream, s0).then(async (children) => {
    const shards = await listAllShards(client, stream);
    const start = (id: string) => BigInt(shards.find((s) => s.ShardId === id)!.HashKeyRange!.StartingHashKey!);
    return children.sort((a, b) => (start(a) < start(b) ? -1 : 1));
  });
  const mid = await putRecords(client, stream, records(20, 'mid'));
  const merged = await mergeShards(client, stream, upper, s1);
  const after = await putRecords(client, stream, records(20, 'after'));
  const all = [...before, ...mid, ...after];
  const afterPosition = (r: PutResult) =>
    positions[r.shardId] === undefined || BigInt(r.sequenceNumber) > BigInt(positions[r.shardId]);
  return {
    stream,
    s0,
    s1,
    lower,
    upper,
    merged,
    positions,
    parents: { [lower]: [s0], [upper]: [s0], [merged]: [upper, s1] } as Record<string, string[]>,
    expected: all.filter(afterPosition).map(idOf).sort(),
    all,
  };
}

test.each(SOURCES)(
  'from %s across a split and a merge: the dry run writes nothing, the import writes once, the spout reads exactly what follows each position, parents first',
  async (from) => {
    const { inspector, zk } = suite.services;
    const app = uniqueName('app');
    const world = await reshardedStream();
    const where = location(from, world.stream, 'old-topology');
    await writeSourceNodes(inspector, from, where.folder, world.positions);
    // LATEST: what is not imported would start now, so a child left to it would lose its records.
    const config = configFile(world.stream, app, { initialPosition: 'LATEST' });
    const importArgs = [
      'import',
      '--from',
      from,
      '--source-zookeeper',
      zk.connectString,
      ...where.args,
      '--config',
      config,
    ];

    const dry = await runTool([...importArgs, '--dry-run']);
    // Nothing at all under the application's path: not even the layout's empty folders.
    expect(await inspector.getData(`/it/${app}`)).toBeUndefined();
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    for (const shard of [world.s0, world.s1])
      expect(dry.stdout).toContain(
        `${shard}: source: after ${world.positions[shard]} -> after ${world.positions[shard]} [write`,
      );
    for (const shard of [world.lower, world.upper, world.merged])
      expect(dry.stdout).toContain(`${shard}: no source position -> TRIM_HORIZON [write`);
    expect(dry.stdout).toContain('dry run: nothing written (5 checkpoint(s) would be)');

    // No terminal to ask on and no --yes: refused, even with "yes" piped in.
    const piped = await runTool(importArgs, { stdin: 'yes\n' });
    expect(piped.code).toBe(5);
    expect(piped.stderr).toContain('not a terminal, so nobody to ask: pass --yes to write; nothing written');
    expect(await inspector.getData(`/it/${app}`)).toBeUndefined();

    const run = await runTool([...importArgs, '--yes']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('written: 5 checkpoint(s) and the bootstrap.');
    const again = await runTool([...importArgs, '--yes']);
    expect(again.code).toBe(0);
    expect(again.stdout.match(/-> already imported/g)).toHaveLength(5);
    expect(again.stdout).toContain('nothing to write');

    const driver = await suite.spout(world.stream, app, { initialPosition: 'LATEST' });
    await driver.pump(() => driver.emits.length >= world.expected.length, { timeoutMs: 90_000 });
    // Anything more would be a record read again, or one the old spout had acked.
    await driver.pump(() => false, { timeoutMs: 2_000 });
    const emitted = driver.emits.map((e) => e.id);
    expect(new Set(emitted).size).toBe(emitted.length);
    expect([...emitted].sort()).toEqual(world.expected);
    expectParentsFirst(driver.emits, world.parents);
  },
);

test('refused while a task of the application holds a lease: named, nothing written', async () => {
  const { inspector, zk } = suite.services;
  const app = uniqueName('app');
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  const put = await putRecords(suite.services.client, stream, records(6, 'r'));
  const driver = await suite.spout(stream, app);
  await driver.pump(() => driver.emits.length >= 6);
  const [shard] = [put[0].shardId];
  await writeSourceNodes(inspector, 'storm-kinesis', `/committed_sequence_numbers/${stream}`, {
    [shard]: put[2].sequenceNumber,
  });
  const checkpoint = `${stateBase(stream, app)}/checkpoints/${shard}`;
  const atLast = { kind: 'AFTER', sequenceNumber: put[5].sequenceNumber };
  await waitFor('the spout checkpointed its last record', async () => {
    const stored = (await readJson(inspector, checkpoint))?.position as { sequenceNumber?: string } | undefined;
    return stored?.sequenceNumber === atLast.sequenceNumber;
  });
  const run = await runTool([
    'import',
    '--from',
    'storm-kinesis',
    '--source-zookeeper',
    zk.connectString,
    '--source-root',
    '/committed_sequence_numbers',
    '--config',
    configFile(stream, app),
    '--overwrite',
    '--yes',
  ]);
  expect(run.code).toBe(4);
  expect(run.stderr).toMatch(
    new RegExp(`refusing: this application's spout is running \\(lease\\(s\\) held: ${shard} by task0-`),
  );
  expect(await readJson(inspector, checkpoint)).toMatchObject({
    position: atLast,
    owner: expect.stringMatching(/^task0-/),
  });
});

test('refuses a position Kinesis does not have in that shard (a source of another stream): nothing written', async () => {
  const { inspector, zk, client } = suite.services;
  const app = uniqueName('app');
  const stream = uniqueName('stream');
  await createStream(client, stream, 2);
  const put = await putRecords(client, stream, records(20, 'r'));
  const [a, b] = [...new Set(put.map((r) => r.shardId))].sort();
  const ofB = put.find((r) => r.shardId === b)!.sequenceNumber;
  await writeSourceNodes(inspector, 'storm-kinesis', `/other/${stream}`, { [a]: ofB });
  const run = await runTool([
    'import',
    '--from',
    'storm-kinesis',
    '--source-zookeeper',
    zk.connectString,
    '--source-root',
    'other',
    '--config',
    configFile(stream, app),
    '--yes',
  ]);
  expect(run.stderr).toContain(`${a}: Kinesis refuses ${ofB} as a position in it`);
  expect(run.code).toBe(2);
  expect(await inspector.getData(`/it/${app}`)).toBeUndefined();
});

test("with ZooKeeper credentials, every node the import creates is the spout's own: creator-only", async () => {
  const { inspector, zk, client } = suite.services;
  const payload = 'etl:import-secret';
  const app = uniqueName('app');
  const stream = uniqueName('stream');
  const root = `/${uniqueName('secured')}`;
  await createStream(client, stream, 1);
  const put = await putRecords(client, stream, records(4, 'r'));
  await writeSourceNodes(inspector, 'storm-kinesis', `/acl/${stream}`, { [put[0].shardId]: put[1].sequenceNumber });
  const config = configFile(stream, app, {
    zookeeper: { connect: zk.connectString, sessionTimeoutMs: 4_000, root, auth: { scheme: 'digest', payload } },
  });
  const run = await runTool([
    'import',
    '--from',
    'storm-kinesis',
    '--source-zookeeper',
    zk.connectString,
    '--source-root',
    '/acl',
    '--config',
    config,
    '--yes',
  ]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const trusted = await ZkSession.connect({
    connect: zk.connectString,
    sessionTimeoutMs: 10_000,
    auth: { scheme: 'digest', payload },
  });
  try {
    const base = `${root}/${app}/${stream}`;
    for (const path of [
      `${root}/${app}`,
      base,
      `${base}/bootstrap`,
      `${base}/checkpoints`,
      `${base}/checkpoints/${put[0].shardId}`,
    ])
      expect([path, isCreatorOnly((await trusted.getACL(path)) ?? [], digestId(payload))]).toEqual([path, true]);
    await expect(inspector.getData(`${base}/bootstrap`)).rejects.toThrow(/NO_AUTH/);
  } finally {
    trusted.close();
  }
});

test('all or nothing: a checkpoint written between the plan and the answer fails the whole transaction', async () => {
  const { inspector, zk } = suite.services;
  process.env.AWS_ACCESS_KEY_ID ??= 'test';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
  const app = uniqueName('app');
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 2);
  const put = await putRecords(suite.services.client, stream, records(20, 'r'));
  const [a, b] = [...new Set(put.map((r) => r.shardId))].sort();
  const last = (shard: string) => put.filter((r) => r.shardId === shard).at(-1)!.sequenceNumber;
  await writeSourceNodes(inspector, 'awslabs-storm-spout', `/kinesis_storm_spout/old/${stream}`, {
    [a]: last(a),
    [b]: last(b),
  });
  const base = stateBase(stream, app);
  const out: string[] = [];
  const io: ToolIo = {
    out: (text) => out.push(text),
    err: (text) => out.push(text),
    interactive: true,
    // The operator reads the plan; meanwhile something else writes b's checkpoint.
    async readLine() {
      await inspector.mkdirp(`${base}/checkpoints`);
      await inspector.create(
        `${base}/checkpoints/${b}`,
        checkpointValue({ kind: 'TRIM_HORIZON' }, 'someone'),
        'persistent',
      );
      return 'yes';
    },
    interrupted: () => new Promise(() => undefined),
    now: () => Date.now(),
  };
  const code = await runImport(
    {
      config: configFile(stream, app),
      source: {
        from: 'awslabs-storm-spout',
        zookeeper: zk.connectString,
        root: 'kinesis_storm_spout',
        topology: 'old',
      },
      dryRun: false,
      overwrite: false,
      yes: false,
    },
    io,
  ).catch((err: unknown) => (err as { exitCode?: number }).exitCode);
  expect(code).toBe(6);
  expect(await inspector.getData(`${base}/checkpoints/${a}`)).toBeUndefined();
  expect(await inspector.getData(`${base}/bootstrap`)).toBeUndefined();
});

test('docs/migration.md: every node kinesis-spout.cjs command of the page runs as printed', async () => {
  const { inspector, zk, client } = suite.services;
  const page = readFileSync(resolve(__dirname, '../../docs/migration.md'), 'utf8');
  const commands = [...page.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => m[1].split('\n'))
    .map((line) => line.trim())
    .filter((line) => line.startsWith('node kinesis-spout.cjs '));
  expect(commands.length).toBeGreaterThanOrEqual(6);
  // The page's names: its stream, its topology, its application (kinesis-local and ZooKeeper are this file's).
  await createStream(client, 'clickstream', 1);
  const put = await putRecords(client, 'clickstream', records(10, 'c'));
  const position = { [put[0].shardId]: put[4].sequenceNumber };
  await writeSourceNodes(
    inspector,
    'awslabs-storm-spout',
    '/kinesis_storm_spout/clickstream-old/clickstream',
    position,
  );
  await writeSourceNodes(inspector, 'storm-kinesis', '/committed_sequence_numbers/clickstream', position);
  const cwd = tempDir();
  writeFileSync(join(cwd, 'spout.json'), JSON.stringify(spoutConf(suite.services, 'clickstream', 'clickstream-etl')));
  const outputs: string[] = [];
  copyFileSync(ENTRY_SCRIPT, join(cwd, 'kinesis-spout.cjs'));
  for (const command of commands) {
    const run = await runShell(command.replaceAll('zk1.example.com:2181', zk.connectString), { cwd, stdin: 'yes\n' });
    if (run.code !== 0) throw new Error(`${command}\nexited ${run.code}\n${run.stdout}\n${run.stderr}`);
    outputs.push(run.stdout);
  }
  expect(outputs.join('\n')).toContain(`${put[0].shardId}: source: after ${put[4].sequenceNumber} -> already imported`);
});
