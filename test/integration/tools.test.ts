/**
 * `kinesis-spout status` and `reset`, run from the built bundle as an operator runs them, against real
 * ZooKeeper and kinesis-local, beside spout processes driven as ShellSpout drives them.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStream, listAllShards, putRecords, splitShard } from '../helpers/kinesisAdmin';
import { readJson, spoutConf, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import { ENTRY_SCRIPT, type Emit, type StormDriver } from '../helpers/stormDriver';
import type { StatusReport } from '../../src/tools/statusView';
import { CoordinationStore } from '../../src/coordination/store';
import { ZkSession } from '../../src/coordination/zk';
import { startZooKeeper } from '../helpers/zookeeperServer';
import { SPOUT_NODE } from '../helpers/spoutNode';

const suite = spoutSuite();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bundle as `kinesis-spout <args>`, feeding `stdin` (then end of input). */
function runTool(
  args: string[],
  options: { stdin?: string; until?: (stdout: string) => boolean; timeoutMs?: number } = {},
): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(SPOUT_NODE, [ENTRY_SCRIPT, ...args], {
      env: { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', ...process.env },
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kinesis-spout ${args.join(' ')} did not finish\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (options.until?.(stdout)) child.kill('SIGINT');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}

/** A config file as an operator would keep it: a topology conf, or the `kinesis.spout` map alone. */
function configFile(stream: string, app: string, asTopologyConf = true): string {
  const dir = mkdtempSync(join(tmpdir(), 'tools-'));
  dirs.push(dir);
  const file = join(dir, 'conf.json');
  const spout = spoutConf(suite.services, stream, app);
  writeFileSync(
    file,
    JSON.stringify(
      asTopologyConf ? { 'topology.name': 'ignored-when-applicationName-is-set', 'kinesis.spout': spout } : spout,
    ),
  );
  return file;
}

async function status(config: string): Promise<StatusReport> {
  const run = await runTool(['status', '--config', config, '--json']);
  if (run.code !== 0) throw new Error(`status exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as StatusReport;
}

const shardOf = (report: StatusReport, shardId: string) => report.shards.find((s) => s.shardId === shardId)!;

function records(n: number, prefix: string): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({ partitionKey: `key-${i}`, data: `${prefix}-${i}` }));
}

async function newStream(shards: number): Promise<string> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, shards);
  return stream;
}

const shardIdsOf = async (stream: string) =>
  (await listAllShards(suite.services.client, stream)).map((s) => s.ShardId!).sort();

/** A stream split once, read to the end by a spout: parent finished, both children checkpointed. */
async function splitAndRead(app: string): Promise<{
  stream: string;
  driver: StormDriver;
  parent: string;
  children: string[];
  ids: string[];
  afterSplit: Date;
  childIds: string[];
}> {
  const stream = await newStream(1);
  const [parent] = await shardIdsOf(stream);
  const before = await putRecords(suite.services.client, stream, records(10, 'before'));
  const children = await splitShard(suite.services.client, stream, parent);
  await new Promise((r) => setTimeout(r, 200));
  const afterSplit = new Date();
  await new Promise((r) => setTimeout(r, 200));
  const after = await putRecords(suite.services.client, stream, records(10, 'after'));
  const driver = await suite.spout(stream, app);
  const ids = [...before, ...after].map((r) => `${r.shardId}:${r.sequenceNumber}`);
  await driver.pump(() => driver.emits.length >= 20, { timeoutMs: 60_000 });
  const config = configFile(stream, app);
  await waitFor('every checkpoint at its last record', async () => {
    const report = await status(config);
    return (
      shardOf(report, parent).state === 'finished' &&
      children.every((c) => shardOf(report, c).checkpoint?.text.startsWith('after '))
    );
  });
  return {
    stream,
    driver,
    parent,
    children,
    ids,
    afterSplit,
    childIds: after.map((r) => `${r.shardId}:${r.sequenceNumber}`),
  };
}

const emittedIds = (emits: Emit[]) => emits.map((e) => e.id);

test('status shows states, owners and checkpoints through a split, as --json and as a table; --watch redraws until Ctrl-C', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const config = configFile(stream, app, false);
  const [parent] = await shardIdsOf(stream);
  const put = await putRecords(suite.services.client, stream, records(10, 'before'));
  const heldBack = `${put[9].shardId}:${put[9].sequenceNumber}`;
  const driver = await suite.spout(stream, app);
  // The last record of the parent stays unacked: the parent cannot finish, its children wait.
  await driver.pump(() => driver.emits.length >= 10, {
    onEmit: (e) => (e.id === heldBack ? undefined : driver.ack(e.id)),
  });
  const children = await splitShard(suite.services.client, stream, parent);
  const afterSplit = await putRecords(suite.services.client, stream, records(10, 'after'));
  /** Each child's last record: its checkpoint is there once every record put to it is acked. */
  const lastOf = (child: string) => afterSplit.filter((p) => p.shardId === child).at(-1)?.sequenceNumber;

  const waiting = await waitFor('parent closed, children waiting', async () => {
    const report = await status(config);
    return (
      shardOf(report, parent).state === 'closed' &&
      shardOf(report, parent).checkpoint?.text === `after ${put[8].sequenceNumber}` &&
      report
    );
  });
  expect(shardOf(waiting, parent).owner).toMatchObject({ taskIndex: 0, host: hostname(), pid: driver.pid, live: true });
  for (const child of children) {
    expect(shardOf(waiting, child)).toMatchObject({
      state: 'waiting on parents',
      parents: [parent],
      waitingOn: [parent],
      owner: null,
      checkpoint: null,
      startsAt: 'TRIM_HORIZON',
    });
  }
  // One GetRecords at the checkpoint: the record held back is the next one.
  expect(shardOf(waiting, parent).lag).toMatchObject({
    millisBehindLatest: expect.any(Number),
    nextRecordAgeMs: expect.any(Number),
  });
  expect(waiting.application).toMatchObject({
    name: app,
    stream,
    zookeeperPath: stateBase(stream, app),
    streamMatches: true,
    bootstrap: {
      initialPosition: 'TRIM_HORIZON',
      firstStart: expect.any(String),
      streamArn: expect.stringContaining(stream),
    },
    members: [expect.objectContaining({ taskIndex: 0, host: hostname(), pid: driver.pid, leases: 1 })],
    counts: expect.objectContaining({ closed: 1, 'waiting on parents': 2 }),
  });

  await driver.ack(heldBack);
  await driver.pump(() => driver.emits.length >= 20);
  // At the last record of each child: a checkpoint written between two acks of a child is not yet there.
  const done = await waitFor('parent finished, children checkpointed', async () => {
    const report = await status(config);
    return (
      shardOf(report, parent).state === 'finished' &&
      children.every((c) => shardOf(report, c).checkpoint?.text === `after ${lastOf(c)}`) &&
      report
    );
  });
  expect(shardOf(done, parent)).toMatchObject({
    checkpoint: { text: 'SHARD_END', position: { kind: 'SHARD_END' } },
    owner: null,
    lag: null,
  });
  for (const child of children) {
    const shard = shardOf(done, child);
    expect(shard).toMatchObject({
      state: 'open',
      owner: { taskIndex: 0, host: hostname(), pid: driver.pid },
      lag: { millisBehindLatest: expect.any(Number) },
    });
    expect(shard.checkpoint!.ageMs).toBeGreaterThanOrEqual(0);
    expect(shard.lag!.nextRecordAgeMs).toBeUndefined();
  }
  expect(Object.keys(done).sort()).toEqual(['application', 'shards', 'takenAt', 'v']);
  expect(Object.keys(done.shards[0]).sort()).toEqual([
    'checkpoint',
    'lag',
    'owner',
    'parents',
    'problem',
    'shardId',
    'startsAt',
    'state',
    'waitingOn',
  ]);

  const table = await runTool(['status', '--config', config]);
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(new RegExp(`${parent}\\s+finished\\s+-\\s+-\\s+SHARD_END`));
  for (const child of children)
    expect(table.stdout).toMatch(
      new RegExp(`${child}\\s+open\\s+${parent}\\s+task 0 ${hostname()}:${driver.pid}\\s+after \\d+`),
    );
  expect(table.stdout).toContain(`members: task 0 on ${hostname()} pid ${driver.pid} (2 lease(s)`);

  const watch = await runTool(['status', '--config', config, '--json', '--watch', '1'], {
    until: (out) => out.split('\n').filter(Boolean).length >= 2,
  });
  expect(watch.code).toBe(0);
  const frames = watch.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as StatusReport);
  expect(frames.length).toBeGreaterThanOrEqual(2);
  expect(Date.parse(frames[1].takenAt) - Date.parse(frames[0].takenAt)).toBeGreaterThanOrEqual(900);
});

test('reset is refused while a lease is held; with --force it writes, and the spout re-reads everything, parents first', async () => {
  const app = uniqueName('app');
  const { stream, driver, parent, children, ids } = await splitAndRead(app);
  const config = configFile(stream, app);
  const base = stateBase(stream, app);
  // Killed: its leases stay until its session times out, as after a crashed worker.
  driver.signal('SIGKILL');
  await driver.exited;
  const checkpointsBefore = await Promise.all(
    [parent, ...children].map((s) => readJson(suite.services.inspector, `${base}/checkpoints/${s}`)),
  );

  const refused = await runTool(['reset', '--config', config, '--to', 'TRIM_HORIZON', '--yes']);
  expect(refused.code).toBe(4);
  expect(refused.stderr).toContain('refusing: 2 lease(s) held');
  expect(refused.stdout).toContain(`${parent}: SHARD_END (finished) -> TRIM_HORIZON (finished marker removed)`);
  expect(
    await Promise.all([parent, ...children].map((s) => readJson(suite.services.inspector, `${base}/checkpoints/${s}`))),
  ).toEqual(checkpointsBefore);

  const forced = await runTool(['reset', '--config', config, '--to', 'TRIM_HORIZON', '--force', '--yes']);
  expect(forced.code).toBe(0);
  expect(forced.stdout).toContain('WARNING (--force)');
  expect(forced.stdout).toContain('written: 3 checkpoint(s)');
  for (const shard of [parent, ...children])
    expect(await readJson(suite.services.inspector, `${base}/checkpoints/${shard}`)).toMatchObject({
      position: { kind: 'TRIM_HORIZON' },
    });
  expect(await suite.services.inspector.getData(`${base}/finished/${parent}`)).toBeUndefined();

  const again = await suite.spout(stream, app);
  await again.pump(() => again.emits.length >= 20, { timeoutMs: 60_000 });
  expect(new Set(emittedIds(again.emits))).toEqual(new Set(ids));
  const lastParent = again.emits.map((e) => e.id.startsWith(`${parent}:`)).lastIndexOf(true);
  const firstChild = again.emits.findIndex((e) => !e.id.startsWith(`${parent}:`));
  expect(lastParent).toBeLessThan(firstChild);
});

test('a reset to a time between the split and the records after it: the finished parent is read to its end again and finished, only newer records are emitted', async () => {
  const app = uniqueName('app');
  const { stream, driver, parent, children, afterSplit, childIds } = await splitAndRead(app);
  await driver.stop();
  const config = configFile(stream, app, false);
  const reset = await runTool(['reset', '--config', config, '--to', afterSplit.toISOString(), '--yes']);
  expect(reset.code).toBe(0);
  expect(reset.stdout).toContain(
    `${parent}: SHARD_END (finished) -> at ${afterSplit.toISOString()} (finished marker removed) [all shards]`,
  );
  const waiting = await status(config);
  expect(shardOf(waiting, parent).state).toBe('closed');
  for (const child of children)
    expect(shardOf(waiting, child)).toMatchObject({
      state: 'waiting on parents',
      checkpoint: { text: `at ${afterSplit.toISOString()}` },
    });

  const again = await suite.spout(stream, app);
  await again.pump(() => again.emits.length >= childIds.length, { timeoutMs: 60_000 });
  await new Promise((r) => setTimeout(r, 1_000));
  await again.next();
  expect(emittedIds(again.emits).sort()).toEqual([...childIds].sort());
  await waitFor('the parent finished again', async () => shardOf(await status(config), parent).state === 'finished');
});

test('after a stop: the question is asked and "no" writes nothing; "yes" resets to LATEST and only newer records are read', async () => {
  const stream = await newStream(2);
  const app = uniqueName('app');
  const config = configFile(stream, app);
  const base = stateBase(stream, app);
  await putRecords(suite.services.client, stream, records(10, 'old'));
  const driver = await suite.spout(stream, app);
  await driver.pump(() => driver.emits.length >= 10);
  await driver.stop();
  const shards = await shardIdsOf(stream);
  const versions = async () =>
    Promise.all(shards.map(async (s) => (await suite.services.inspector.getData(`${base}/checkpoints/${s}`))?.version));
  const before = await versions();

  const declined = await runTool(['reset', '--config', config, '--to', 'LATEST'], { stdin: 'no\n' });
  expect(declined.code).toBe(5);
  expect(declined.stdout).toContain('Write 2 checkpoint(s)? Type yes to go on: ');
  expect(declined.stdout).toContain('nothing written');
  expect(await versions()).toEqual(before);

  const accepted = await runTool(['reset', '--config', config, '--to', 'LATEST'], { stdin: 'yes\n' });
  expect(accepted.code).toBe(0);
  for (const shard of shards)
    expect(await readJson(suite.services.inspector, `${base}/checkpoints/${shard}`)).toMatchObject({
      position: { kind: 'AT_TIMESTAMP' },
      owner: expect.stringMatching(/^tool-/),
    });
  // No lease was left behind by the reset's transaction.
  expect(await suite.services.inspector.getChildren(`${base}/leases`)).toEqual([]);

  const fresh = await putRecords(suite.services.client, stream, records(5, 'new'));
  const restarted = await suite.spout(stream, app);
  await restarted.pump(() => restarted.emits.length >= 5);
  await new Promise((r) => setTimeout(r, 1_000));
  await restarted.next();
  expect(emittedIds(restarted.emits).sort()).toEqual(fresh.map((r) => `${r.shardId}:${r.sequenceNumber}`).sort());
});

test('reset to a sequence number resumes after that record; clear errors for an unknown shard, a sequence number without its shard, a bad --to, a missing application', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const put = await putRecords(suite.services.client, stream, records(5, 'r'));
  const driver = await suite.spout(stream, app);
  await driver.pump(() => driver.emits.length >= 5);
  await driver.stop();
  const config = configFile(stream, app);
  const [shard] = await shardIdsOf(stream);

  const unknown = await runTool([
    'reset',
    '--config',
    config,
    '--to',
    'LATEST',
    '--shards',
    'shardId-000000000999',
    '--yes',
  ]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain(`unknown shard shardId-000000000999; the stream has ${shard}`);

  const seq = await runTool(['reset', '--config', config, '--to', put[1].sequenceNumber, '--yes']);
  expect(seq.code).toBe(2);
  expect(seq.stderr).toContain('a sequence number belongs to one shard: name it with --shards <shardId>');

  const badTo = await runTool(['reset', '--config', config, '--to', 'yesterday']);
  expect(badTo.code).toBe(2);
  expect(badTo.stderr).toContain('--to "yesterday": allowed: TRIM_HORIZON, LATEST, an ISO-8601 timestamp');

  const missing = await runTool(['status', '--config', configFile(stream, 'no-such-app')]);
  expect(missing.code).toBe(3);
  expect(missing.stderr).toContain(`no application state at ${stateBase(stream, 'no-such-app')}`);
  expect(missing.stderr).toContain(app);

  const back = await runTool(['reset', '--config', config, '--to', put[1].sequenceNumber, '--shards', shard, '--yes']);
  expect(back.code).toBe(0);
  expect(back.stdout).toContain(
    `${shard}: after ${put[4].sequenceNumber} -> after ${put[1].sequenceNumber} [selected]`,
  );
  const restarted = await suite.spout(stream, app);
  await restarted.pump(() => restarted.emits.length >= 3);
  await new Promise((r) => setTimeout(r, 1_000));
  await restarted.next();
  expect(emittedIds(restarted.emits)).toEqual(put.slice(2).map((r) => `${r.shardId}:${r.sequenceNumber}`));
});

test('a reset is one transaction: a lease taken, a checkpoint moved or created since the plan, and nothing is written', async () => {
  const zk = suite.services.inspector;
  const base = `/it/${uniqueName('txn')}/stream`;
  const tool = new CoordinationStore(zk, base, 'tool-test');
  const spoutTask = new CoordinationStore(zk, base, 'task0-h-1-s');
  await tool.ensureLayout();
  const a = await spoutTask.checkpointOrStart('a', { kind: 'AFTER', sequenceNumber: '10' });
  const reset = (version: number | undefined, shardId = 'a') => ({
    shardId,
    position: { kind: 'TRIM_HORIZON' } as const,
    checkpointVersion: version,
    removeFinished: false,
    removeEnded: false,
  });

  expect(await spoutTask.acquireLease('a')).toBe(true);
  expect(await tool.resetCheckpoints([reset(undefined, 'b'), reset(a.version)], true)).toBe(false);
  expect(await tool.readCheckpoint('a')).toEqual(a);
  expect(await tool.readCheckpoint('b')).toBeUndefined();
  // --force writes whoever holds the lease.
  expect(await tool.resetCheckpoints([reset(a.version)], false)).toBe(true);
  await spoutTask.releaseLease('a');

  const moved = await tool.readCheckpoint('a');
  await spoutTask.writeCheckpoint('a', { kind: 'AFTER', sequenceNumber: '20' }, moved!.version);
  expect(await tool.resetCheckpoints([reset(undefined, 'b'), reset(moved!.version)], true)).toBe(false);
  expect(await tool.readCheckpoint('b')).toBeUndefined();
  await spoutTask.checkpointOrStart('b', { kind: 'TRIM_HORIZON' });
  expect(await tool.resetCheckpoints([reset(undefined, 'b')], true)).toBe(false);

  const current = await tool.readCheckpoint('a');
  expect(await tool.resetCheckpoints([reset(current!.version), reset(undefined, 'c')], true)).toBe(true);
  expect(await tool.checkpointRecord('a')).toMatchObject({ position: { kind: 'TRIM_HORIZON' }, writer: 'tool-test' });
  expect((await tool.readCheckpoint('c'))?.position).toEqual({ kind: 'TRIM_HORIZON' });
  expect(await zk.getChildren(`${base}/leases`)).toEqual([]);
  await zk.removeTree(`/it/${base.split('/')[2]}`);
});

test('status --watch outlives a ZooKeeper outage longer than its session: it reports the failures and opens a new session', async () => {
  const zk = await startZooKeeper();
  const stream = await newStream(1);
  const app = uniqueName('app');
  const session = await ZkSession.connect({ connect: zk.connectString, sessionTimeoutMs: 4_000 });
  const store = new CoordinationStore(session, `/it/${app}/${stream}`, 'test');
  await store.ensureLayout();
  await store.bootstrap({
    v: 1,
    firstStartMs: Date.now(),
    initialPosition: 'TRIM_HORIZON',
    streamArn: 'arn:test',
    streamCreatedMs: 0,
    shardsAtStart: [],
    openAtStart: [],
  });
  session.close();
  const dir = mkdtempSync(join(tmpdir(), 'tools-'));
  dirs.push(dir);
  const config = join(dir, 'conf.json');
  writeFileSync(
    config,
    JSON.stringify({
      ...spoutConf(suite.services, stream, app),
      zookeeper: { connect: zk.connectString, sessionTimeoutMs: 4_000, root: '/it' },
    }),
  );
  const child = spawn(SPOUT_NODE, [ENTRY_SCRIPT, 'status', '--config', config, '--json', '--watch', '1'], {
    env: { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', ...process.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const reports = () => stdout.split('\n').filter(Boolean).length;
  try {
    await waitFor('a first report', () => reports() >= 1);
    await zk.stop();
    await new Promise((r) => setTimeout(r, 8_000));
    const before = reports();
    await zk.restart();
    await waitFor('a report after the outage', () => reports() > before, 30_000);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toContain('status failed');
  } finally {
    child.kill('SIGKILL');
    await zk.stop();
  }
});

test('status exits 7 when it prints a PROBLEM line (a checkpoint node it cannot read), 0 once the node is fixed', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const config = configFile(stream, app);
  const base = stateBase(stream, app);
  await putRecords(suite.services.client, stream, records(3, 'r'));
  const driver = await suite.spout(stream, app);
  await driver.pump(() => driver.emits.length >= 3);
  await driver.stop();
  const [shard] = await shardIdsOf(stream);
  const node = `${base}/checkpoints/${shard}`;
  const good = await suite.services.inspector.getData(node);
  await suite.services.inspector.setData(node, Buffer.from('not json'), good!.version);

  const json = await runTool(['status', '--config', config, '--json']);
  expect(json.code).toBe(7);
  expect(shardOf(JSON.parse(json.stdout) as StatusReport, shard).problem).toContain(shard);
  const table = await runTool(['status', '--config', config]);
  expect(table.code).toBe(7);
  expect(table.stdout).toContain(`PROBLEM ${shard}:`);

  const broken = await suite.services.inspector.getData(node);
  await suite.services.inspector.setData(node, good!.data, broken!.version);
  expect((await runTool(['status', '--config', config])).code).toBe(0);
});
