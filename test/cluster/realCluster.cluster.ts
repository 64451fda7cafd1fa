/**
 * The Java example topology on a real Storm 2.8 cluster: Nimbus and a supervisor as separate JVMs from a
 * Storm home assembled by Maven, worker JVMs started by the supervisor, the jar submitted with
 * StormSubmitter (what `storm jar` runs), against a real ZooKeeper and kinesis-local. Two spout components
 * read the stream, each under an application name of its own: `kinesis` speaking Storm's JSON with its
 * processes, `kinesis-compact` the compact wire format (`useCompactSerializer()`). Records are put
 * without pause through a shard split, a deactivate + rebalance + activate, and a worker JVM running
 * both killed with SIGKILL; every record put must reach the recording bolt at least once from each
 * component, and each component's checkpoints must end up covering them all. Then a new version of the
 * topology is deployed beside it (docs/operations.md, "Deploying a new version"): submitted under another
 * name with the same applications, the first killed with `storm kill` and its default wait, records put
 * throughout: none lost, none waiting anywhere near the kill's wait. The figures (records, duplicates, recovery times) are printed and written to
 * figures.json in the run's temp folder (kept, with the Storm home and every log, by KEEP_CLUSTER_DIRS=1).
 *
 * Not part of `npm test` (the name does not end in .test.ts): `npm run test:cluster`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZkSession } from '../../src/coordination/zk';
import { COMPACT_WIRE } from '../../src/multilang/compact';
import { startServices, uniqueName, type Services } from '../helpers/fixture';
import { createStream, listAllShards, splitShard } from '../helpers/kinesisAdmin';
import { freePort } from '../helpers/ports';
import { checkpointsBehind, duplicates, idOf, missing } from '../e2e/helpers/checks';
import { mavenBuild, REPO, type Build } from '../e2e/helpers/maven';
import {
  AWS_ENV,
  exampleConfig,
  readRecorded,
  processCwd,
  type ExampleConfig,
  type Received,
} from '../e2e/helpers/topology';
import { alive, cmdline, descendants, kill, sleep, StormCluster, zkChildren } from './helpers/stormCluster';
import { assembleStormHome, writeStormYaml, type Ports } from './helpers/stormHome';
import { ContinuousWriter } from './helpers/writer';

/** What is submitted: the Java example, with the `storm/` module's spout shaded into its jar. */
const TOPOLOGY = {
  project: 'topology-examples/java',
  jar: 'kinesis-topology-example-0.1.0.jar',
  main: 'io.github.kinesisshellspout.example.KinesisTopology',
};
const SPOUT_CLASS = 'io.github.kinesisshellspout.KinesisShellSpout';

const SPOUT = 'kinesis'; // the spout's component id in the example topology
const MESSAGE_TIMEOUT_SECS = 30;

const SPOUT_TASKS = 4; // ShellSpout starts one process per task, whatever the executors
/** The second spout component (the example's `moreSpouts`), on the compact wire format. */
const COMPACT = 'kinesis-compact';
const COMPACT_TASKS = 2;
const COMPONENTS = [SPOUT, COMPACT];

let dir: string;
let services: Services | undefined;
let cluster: StormCluster | undefined;
let writer: ContinuousWriter | undefined;
let build: Build;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'storm-cluster-'));
  services = await startServices();
  build = await mavenBuild(join(REPO, TOPOLOGY.project), TOPOLOGY.jar);
}, 15 * 60_000);

afterEach(async () => {
  await writer?.stop();
  writer = undefined;
  await cluster?.stop();
  cluster = undefined;
}, 120_000);

afterAll(async () => {
  await services?.stop();
  if (!process.env.KEEP_CLUSTER_DIRS) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}, 120_000);

async function distinctPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/** A Storm home of its own (temp dir), Nimbus and a supervisor with `slots` worker slots, both ready. */
async function startCluster(name: string, slots: number, yaml: Record<string, unknown> = {}): Promise<StormCluster> {
  const s = services!;
  const [nimbus, supervisor, ...slotPorts] = await distinctPorts(2 + slots);
  const ports: Ports = { nimbus, supervisor, slots: slotPorts };
  const home = assembleStormHome(join(dir, name));
  writeStormYaml(home, s.zk.port, ports, { 'storm.zookeeper.root': `/storm-${name}`, ...yaml });
  cluster = new StormCluster(home, ports.nimbus, { ...process.env, ...AWS_ENV, AWS_EC2_METADATA_DISABLED: 'true' });
  await cluster.waitReady(async () => (await zkChildren(s.zk.connectString, `/storm-${name}/supervisors`)).length > 0);
  return cluster;
}

/** Writes the example's config file and submits it with StormSubmitter, as `storm jar ... remote config.json` does. */
async function submit(
  c: StormCluster,
  name: string,
  stream: string,
  app: string,
  overrides: Record<string, unknown>,
): Promise<ExampleConfig> {
  const config = exampleConfig(services!, stream, app, dir, { outputFile: join(dir, `${name}.jsonl`), ...overrides });
  const configFile = join(dir, `${name}.json`);
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const output = await c.submit(build.jar, TOPOLOGY.main, ['remote', configFile]);
  expect(output).toMatch(/Finished submitting topology/);
  return config;
}

/** The spouts' node processes, and the last lifecycle line each logged (`activated` / `deactivated`). */
function spoutStates(c: StormCluster): Map<number, string | undefined> {
  const states = new Map<number, string | undefined>();
  for (const pid of descendants(c.supervisor.pid))
    if (cmdline(pid).includes('kinesis-spout')) states.set(pid, undefined);
  for (const m of c.workerLog().matchAll(/ShellLog pid:(\d+), name:\S+ (activated|deactivated)/g)) {
    if (states.has(Number(m[1]))) states.set(Number(m[1]), m[2]);
  }
  return states;
}

/** The spout component each spout process belongs to, from its log lines (`ShellLog pid:<pid>, name:<component>`). */
function spoutComponents(c: StormCluster): Map<number, string> {
  const components = new Map<number, string>();
  for (const m of c.workerLog().matchAll(/ShellLog pid:(\d+), name:(\S+) /g)) components.set(Number(m[1]), m[2]);
  return components;
}

function allSpouts(c: StormCluster, count: number, state: 'activated' | 'deactivated'): boolean {
  const states = [...spoutStates(c).values()];
  return states.length === count && states.every((s) => s === state);
}

/** On a cluster nothing but Storm is on the workers' classpath: the topology jar must carry the spout class and its script. */
test('the submitted jar carries the spout class and the bundled script', () => {
  const entries = execFileSync('jar', ['tf', build.jar], { encoding: 'utf8' }).split('\n');
  expect(entries).toContain(`${SPOUT_CLASS.replace(/\./g, '/')}.class`);
  expect(entries).toContain('resources/kinesis-spout.cjs');
});

test(
  'a real cluster: split, deactivate + rebalance + activate, a worker SIGKILLed, records put throughout: nothing lost',
  async () => {
    const started = Date.now();
    const s = services!;
    // Three workers for the topology, one for the new version deployed beside it at the end.
    const c = await startCluster('main', 4);
    const clusterUp = Date.now();

    const stream = uniqueName('stream');
    await createStream(s.client, stream, 2);
    const app = uniqueName('cluster');
    const apps: Record<string, string> = { [SPOUT]: app, [COMPACT]: `${app}-compact` };
    const w = (writer = new ContinuousWriter(s.client, stream));
    w.start();
    const config = await submit(c, 'main', stream, app, {
      spoutParallelism: 2,
      spoutTasks: SPOUT_TASKS, // room to rebalance the spout up to 4 executors
      workers: 2,
      boltParallelism: 2,
      moreSpouts: [
        {
          name: COMPACT,
          compactSerializer: true,
          spoutParallelism: COMPACT_TASKS,
          spout: { applicationName: apps[COMPACT] },
        },
      ],
      storm: { 'topology.message.timeout.secs': MESSAGE_TIMEOUT_SECS },
    });
    const received = (component?: string): Received[] =>
      readRecorded(config.outputFile).filter(
        (r): r is Received => r.event === 'received' && (component === undefined || r.component === component),
      );
    const spoutProcesses = SPOUT_TASKS + COMPACT_TASKS;
    await c.waitFor(
      '2 workers and the first records recorded from each spout component',
      () => c.workerPids().length === 2 && COMPONENTS.every((component) => received(component).length > 0),
      240_000,
    );
    // The spouts run from the resources/ folder the supervisor extracted from the topology jar.
    for (const pid of spoutStates(c).keys()) expect(processCwd(pid)).toMatch(/\/resources(\.\d+)?$/);
    const flowing = Date.now();

    // A split while records keep coming: the children are read once the parent is finished.
    const [parent] = (await listAllShards(s.client, stream)).map((shard) => shard.ShardId!);
    const splitAt = Date.now();
    const children = await splitShard(s.client, stream, parent);
    const firstChild = await c.waitFor(
      'a record of a child shard recorded',
      () => received().find((r) => children.includes(String(r.values.shardId))),
      120_000,
    );
    const splitToChildrenMs = firstChild.at - splitAt;

    // Deactivate, rebalance to 3 workers and 3 spout executors, activate (topology-examples/README.md).
    await c.command('Deactivate', [app]);
    await c.waitFor('every spout deactivated', () => allSpouts(c, spoutProcesses, 'deactivated'), 60_000);
    const rebalanceAt = Date.now();
    await c.command('Rebalance', [app, '-w', '5', '-n', '3', '-e', `${SPOUT}=3`]);
    await c.waitFor(
      '3 workers after the rebalance',
      () => c.workerPids().length === 3 && !c.workerPids().some((pid) => !alive(pid)),
      240_000,
    );
    await c.command('Activate', [app]);
    await c.waitFor('every spout activated', () => allSpouts(c, spoutProcesses, 'activated'), 240_000);
    const activatedAt = Date.now();
    await c.waitFor(
      'a record put after the activation recorded from each spout component',
      () =>
        COMPONENTS.every((component) => {
          const ids = new Set(received(component).map((r) => r.id));
          return w.put.some((r) => r.at > activatedAt && ids.has(idOf(r)));
        }),
      120_000,
    );
    const rebalanceToFlowingMs = Date.now() - rebalanceAt;

    // A worker JVM killed outright: its tuples in flight time out and are replayed; the supervisor restarts it.
    // One that runs spouts, of both components if one does, of the compact one at least: its tuples in
    // flight and its shards' leases are what must be recovered.
    const components = spoutComponents(c);
    const runs = (pid: number, component: string) =>
      descendants(pid).some((child) => cmdline(child).includes('kinesis-spout') && components.get(child) === component);
    const candidates = c.workerPids().filter((pid) => runs(pid, COMPACT));
    const victim = candidates.find((pid) => runs(pid, SPOUT)) ?? candidates[0];
    if (victim === undefined) throw new Error(`no worker runs a spout process of ${COMPACT}\n${c.logTail()}`);
    const victimRunsBoth = runs(victim, SPOUT);
    const killedAt = Date.now();
    kill(victim, 'SIGKILL');
    await c.waitFor(
      'the worker restarted',
      () => {
        const now = c.workerPids();
        return now.length === 3 && !now.includes(victim);
      },
      240_000,
    );
    const workerBackMs = Date.now() - killedAt;
    const putBeforeKill = w.putBefore(killedAt);
    let left: string[] = [];
    const missingFrom = (put: typeof putBeforeKill): string[] =>
      COMPONENTS.flatMap((component) => missing(received(component), put).map((id) => `${component} ${id}`));
    await c
      .waitFor(
        'every record put before the kill recorded from each spout component',
        () => {
          left = missingFrom(putBeforeKill);
          return left.length === 0;
        },
        240_000,
      )
      .catch((err: Error) => {
        throw new Error(
          `${left.length} records put before the kill never recorded, e.g. ${left.slice(0, 3).join(', ')}\n${err.message}`,
        );
      });
    const killToAllRecordedMs = Date.now() - killedAt;

    await sleep(5_000); // records put after the kill, read by the restarted worker's spout
    const put = await w.stop();
    const stoppedAt = Date.now();
    await c
      .waitFor(
        'every record put recorded from each spout component',
        () => {
          left = missingFrom(put);
          return left.length === 0;
        },
        240_000,
      )
      .catch((err: Error) => {
        throw new Error(
          `${left.length} of ${put.length} records never recorded, e.g. ${left.slice(0, 3).join(', ')}\n${err.message}`,
        );
      });
    let behind: string[] = [];
    await c
      .waitFor(
        'checkpoints covering every record put',
        async () => {
          // A session per look: on a machine this busy, the file's long-lived inspector session can expire.
          const inspector = await ZkSession.connect({ connect: s.zk.connectString, sessionTimeoutMs: 20_000 });
          try {
            behind = [];
            for (const component of COMPONENTS) {
              const late = await checkpointsBehind({ ...s, inspector }, stream, apps[component], put);
              behind.push(...late.map((shard) => `${component} ${shard}`));
            }
          } finally {
            inspector.close();
          }
          return behind.length === 0;
        },
        180_000,
      )
      .catch((err: Error) => {
        throw new Error(`checkpoints behind: ${behind.join('; ')}\n${err.message}`);
      });
    const drainedMs = Date.now() - stoppedAt;

    const all = received(SPOUT);
    const compact = received(COMPACT);
    // Each delivery after an id's first, by when it came: what the rebalance and the kill each cost.
    const phases = (tuples: Received[]) => {
      const seen = new Set<string>();
      const replays = { beforeRebalance: 0, rebalanceToKill: 0, afterKill: 0 };
      for (const r of [...tuples].sort((a, b) => a.at - b.at)) {
        if (!seen.has(r.id)) seen.add(r.id);
        else if (r.at < rebalanceAt) replays.beforeRebalance += 1;
        else if (r.at < killedAt) replays.rebalanceToKill += 1;
        else replays.afterKill += 1;
      }
      return replays;
    };
    // Every process of the compact component said so at its handshake, no process of the JSON one did.
    const log = c.workerLog();
    const spokeCompact = new Map<number, string>();
    for (const m of log.matchAll(
      new RegExp(`ShellLog pid:(\\d+), name:(\\S+) speaking the ${COMPACT_WIRE} wire format`, 'g'),
    ))
      spokeCompact.set(Number(m[1]), m[2]);
    const processesOf = (component: string) =>
      [...spoutComponents(c).entries()].filter(([, name]) => name === component).map(([pid]) => pid);
    const figures = {
      recordsPut: put.length,
      shardsWritten: new Set(put.map((r) => r.shardId)).size,
      tuplesRecorded: all.length,
      duplicates: duplicates(all),
      duplicatesByPhase: phases(all),
      putPerSecond: Math.round((put.length / (stoppedAt - put[0].at)) * 1000),
      lost: missing(all, put).length,
      compact: {
        tuplesRecorded: compact.length,
        duplicates: duplicates(compact),
        duplicatesByPhase: phases(compact),
        lost: missing(compact, put).length,
        processes: processesOf(COMPACT).length,
        processesSpeakingCompact: [...spokeCompact.values()].filter((name) => name === COMPACT).length,
      },
      victimRanBothComponents: victimRunsBoth,
      putFailures: w.lastFailure()?.message ?? null,
      clusterStartMs: clusterUp - started,
      submitToFlowingMs: flowing - clusterUp,
      splitToChildRecordMs: splitToChildrenMs,
      rebalanceToFlowingMs,
      killToWorkerRestartedMs: workerBackMs,
      killToEveryEarlierRecordMs: killToAllRecordedMs,
      stopWritingToAllAckedMs: drainedMs,
      messageTimeoutSecs: MESSAGE_TIMEOUT_SECS,
      wallMs: Date.now() - started,
    };
    writeFileSync(join(dir, 'figures.json'), `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`real-cluster figures:\n${JSON.stringify(figures, null, 2)}`);

    expect(figures.lost).toBe(0);
    expect(figures.compact.lost).toBe(0);
    expect(figures.shardsWritten).toBe(4); // both parents and both children carried records
    // The first processes and those the rebalance and the restarted worker started: each spoke compact.
    expect(figures.compact.processes).toBeGreaterThan(COMPACT_TASKS);
    expect(processesOf(COMPACT).filter((pid) => spokeCompact.get(pid) !== COMPACT)).toEqual([]);
    expect([...spokeCompact.values()].filter((name) => name !== COMPACT)).toEqual([]);
    expect(processesOf(SPOUT).length).toBeGreaterThanOrEqual(SPOUT_TASKS);
    // Storm chose the serializer per component (each executor thread logs its own): compact for this
    // component only, the other keeps a JSON one.
    const serializers = new Map<string, Set<string>>();
    for (const m of log.matchAll(/\[Thread-\d+-(\S+)-executor\[[^\]]*\]\] Storm multilang serializer: (\S+)/g)) {
      if (!serializers.has(m[1])) serializers.set(m[1], new Set());
      serializers.get(m[1])!.add(m[2]);
    }
    expect([...(serializers.get(COMPACT) ?? [])]).toEqual(['io.github.kinesisshellspout.CompactSerializer']);
    expect([...(serializers.get(SPOUT) ?? [])]).toEqual([expect.stringMatching(/\.(LogLevel)?JsonSerializer$/)]);

    const deploy = await deployNewVersion(c, stream, app, apps, config.outputFile);
    writeFileSync(join(dir, 'figures.json'), `${JSON.stringify({ ...figures, deploy }, null, 2)}\n`);
    console.log(`deploying a new version:\n${JSON.stringify(deploy, null, 2)}`);
    expect(deploy.lost).toBe(0);
    expect(deploy.handedOverOnDeactivate).toBeGreaterThan(0);
    // Loose: without the hand-over a shard waits out the whole kill (30 s), with it a few seconds.
    expect(deploy.longestWaitAfterKillMs).toBeLessThan((MESSAGE_TIMEOUT_SECS * 1000) / 2);
  },
  35 * 60_000,
);

/**
 * Submits a second version (`<app>-v2`, one worker, the same applications and components) beside the running
 * topology, waits until it records tuples, then `storm kill <app>` with its default wait (the message
 * timeout), as docs/operations.md prints it, and waits until the old one is gone; records are put throughout.
 * Returns what it cost: lost records, the longest wait from put to recorded of those put after the kill,
 * and how many spout processes of the old version handed their leases over when deactivated.
 */
async function deployNewVersion(
  c: StormCluster,
  stream: string,
  app: string,
  apps: Record<string, string>,
  blueOutput: string,
): Promise<{
  recordsPut: number;
  lost: number;
  longestWaitAfterKillMs: number;
  handedOverOnDeactivate: number;
  gaveWayWithinMs: number;
  killToGoneMs: number;
  wallMs: number;
}> {
  const began = Date.now();
  const w = (writer = new ContinuousWriter(services!.client, stream));
  w.start();
  const green = await submit(c, 'green', stream, app, {
    topologyName: `${app}-v2`,
    spoutParallelism: 2,
    workers: 1,
    boltParallelism: 1,
    moreSpouts: [
      {
        name: COMPACT,
        compactSerializer: true,
        spoutParallelism: COMPACT_TASKS,
        spout: { applicationName: apps[COMPACT] },
      },
    ],
    storm: { 'topology.message.timeout.secs': MESSAGE_TIMEOUT_SECS },
  });
  const recorded = (): Received[] =>
    [...readRecorded(blueOutput), ...readRecorded(green.outputFile)].filter(
      (r): r is Received => r.event === 'received',
    );
  // Every task of it started (its worker's log says so) and joined: while both versions are active they share
  // the shards by count, and with 3 readable shards among 6 tasks its `kinesis` tasks may hold none yet.
  const greenLog = () =>
    c
      .workerLogs()
      .filter((f) => f.includes(`/${app}-v2-`))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
  await c.waitFor(
    'every spout task of the new version started',
    () =>
      (greenLog().match(/ShellLog pid:\d+, name:\S+ kinesis-shell-spout task \d+ \(of/g) ?? []).length >=
      2 + COMPACT_TASKS,
    240_000,
  );
  await sleep(5_000);
  const killedAt = Date.now();
  await c.command('KillTopology', [app]);
  // Deactivated beside the new version, every spout process of the old one gives way at once, not after the
  // wait: its member node says `standby`. (Its log lines say so too, but Storm reads a deactivated spout's
  // output only with the next command it sends it, and it sends none: they reach the worker's log late.)
  const onStandby = async (): Promise<number> => {
    const inspector = await ZkSession.connect({ connect: services!.zk.connectString, sessionTimeoutMs: 20_000 });
    try {
      let standby = 0;
      for (const application of Object.values(apps)) {
        const members = `/e2e/${application}/${stream}/members`;
        for (const member of await inspector.getChildren(members)) {
          const node = await inspector.getData(`${members}/${member}`);
          if (node && (JSON.parse(node.data.toString('utf8')) as { standby?: boolean }).standby === true) standby += 1;
        }
      }
      return standby;
    } finally {
      inspector.close();
    }
  };
  let handedOverOnDeactivate = 0;
  await c.waitFor(
    'every spout process of the old version on standby',
    async () => (handedOverOnDeactivate = await onStandby()) >= SPOUT_TASKS + COMPACT_TASKS,
    60_000,
  );
  const gaveWayWithinMs = Date.now() - killedAt;
  await c.waitFor('the old version gone', async () => (await c.topology(app)) === undefined, 240_000);
  const killToGoneMs = Date.now() - killedAt;
  await sleep(5_000);
  const put = await w.stop();
  let left: string[] = [];
  await c
    .waitFor(
      'every record put during the deploy recorded from each spout component',
      () => {
        const all = recorded();
        left = COMPONENTS.flatMap((component) =>
          missing(
            all.filter((r) => r.component === component),
            put,
          ),
        );
        return left.length === 0;
      },
      240_000,
    )
    .catch(() => undefined);
  const first = new Map<string, number>();
  for (const r of recorded())
    first.set(`${r.component} ${r.id}`, Math.min(first.get(`${r.component} ${r.id}`) ?? Infinity, r.at));
  let longestWaitAfterKillMs = 0;
  for (const r of put.filter((p) => p.at >= killedAt))
    for (const component of COMPONENTS) {
      const at = first.get(`${component} ${idOf(r)}`);
      if (at !== undefined) longestWaitAfterKillMs = Math.max(longestWaitAfterKillMs, at - r.at);
    }
  return {
    recordsPut: put.length,
    lost: left.length,
    longestWaitAfterKillMs,
    handedOverOnDeactivate,
    gaveWayWithinMs,
    killToGoneMs,
    wallMs: Date.now() - began,
  };
}

/**
 * Storm 2.8's Nimbus schedules with the DefaultScheduler unless storm.yaml names another ("Using default
 * scheduler" in its log), which honours topology.workers and `rebalance -n`, as the test above shows.
 * Clusters that set the ResourceAwareScheduler get as many workers as the executors' memory needs:
 * topology.workers and `rebalance -n` are ignored, topology.worker.max.heap.size.mb (the most memory
 * RAS puts in one worker) decides, and `rebalance -t` can change it.
 */
test(
  'under the ResourceAwareScheduler, rebalance -n changes nothing and topology.worker.max.heap.size.mb sets the workers',
  async () => {
    const s = services!;
    const c = await startCluster('ras', 4, {
      'storm.scheduler': 'org.apache.storm.scheduler.resource.ResourceAwareScheduler',
    });
    expect(c.log(c.nimbus)).toMatch(
      /Using custom scheduler: org\.apache\.storm\.scheduler\.resource\.ResourceAwareScheduler/,
    );
    const stream = uniqueName('stream');
    await createStream(s.client, stream, 1);
    const app = uniqueName('ras');
    await submit(c, 'ras', stream, app, { spoutParallelism: 2, workers: 3, boltParallelism: 2 });
    const scheduled = async (what: string, accept: (workers: number) => boolean): Promise<number> => {
      const t = await c.waitFor(
        what,
        async () => {
          const now = await c.topology(app);
          return (
            now !== undefined &&
            now.status === 'ACTIVE' &&
            accept(now.workers) &&
            c.workerPids().length === now.workers &&
            now
          );
        },
        240_000,
      );
      return t.workers;
    };
    const initial = await scheduled('the topology scheduled', (n) => n > 0);
    expect(initial).not.toBe(3); // topology.workers asked for 3

    await c.command('Rebalance', [app, '-w', '1', '-n', String(initial + 2)]);
    await sleep(8_000); // past the wait and a few of Nimbus's scheduling rounds (nimbus.monitor.freq.secs 2)
    expect(await scheduled('the topology rescheduled after rebalance -n', (n) => n > 0)).toBe(initial);

    await c.command('Rebalance', [app, '-w', '1', '-t', JSON.stringify({ 'topology.worker.max.heap.size.mb': 384 })]);
    const smaller = await scheduled('more, smaller workers after rebalance -t', (n) => n > initial);
    console.log(
      `ResourceAwareScheduler: topology.workers 3 -> ${initial} workers; rebalance -n ${initial + 2} -> ${initial}; topology.worker.max.heap.size.mb 384 -> ${smaller}`,
    );
  },
  15 * 60_000,
);
