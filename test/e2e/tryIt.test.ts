/**
 * docs/try-it.md as a new user follows it: its files written as the page shows them, and every line of its
 * shell blocks taken from the page and run as printed (`bash -c <line>`), in the folder the page names, on
 * the page's own ports: the emulator, `mvn -q package`, the `java` lines (LocalCluster, a ZooKeeper of one's
 * own, fan-out), the tools, the fan-out front. Two lines are not run, and the test says why (NOT_RUN): step 1's
 * build, done by the suite's Maven helper in this clone, and the producer's `npm install`, for which the
 * clone's node_modules stand in.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { waitFor } from '../helpers/fixture';
import { mavenInstallModule, REPO } from './helpers/maven';

const PAGE = readFileSync(join(REPO, 'docs/try-it.md'), 'utf8');
/** The ports the page's commands use: the emulator's two, the fan-out front's, the ZooKeeper's. */
const PAGE_PORTS = [4568, 4569, 4570, 2182];
/** A data point of the spout's per-process metric, as LoggingMetricsConsumer logs it. */
const METRICS_LINE = /LoggingMetricsConsumer.*kinesis-spout\s.*emitted/;

interface Block {
  lang: string;
  file?: string;
  text: string;
}

const blocks: Block[] = [...PAGE.matchAll(/```(\w+)(?: file=(\S+))?\n([\s\S]*?)```/g)].map((m) => ({
  lang: m[1],
  file: m[2],
  text: m[3],
}));
const shellLines = blocks
  .filter((b) => b.lang === 'sh')
  .flatMap((b) => b.text.split('\n'))
  .filter((l) => l.trim() !== '');

/** Lines of the page this suite does not run, and why. */
const NOT_RUN = new Map([
  [
    'npm ci && npm run build && (cd storm && mvn -q install -DskipTests)',
    'this clone is built (`npm run build` before the e2e suite); mavenInstallModule installs the module, running its tests',
  ],
]);

const used = new Set<string>();
/** The one shell line of the page containing every one of `parts` and none of `without`. */
function line(parts: string[], without: string[] = []): string {
  const found = shellLines.filter((l) => parts.every((p) => l.includes(p)) && !without.some((w) => l.includes(w)));
  if (found.length !== 1) throw new Error(`docs/try-it.md has ${found.length} shell lines with ${parts.join(' and ')}`);
  used.add(found[0]);
  return found[0];
}

// In kinesis-shell-spout/ (this clone).
const EMULATOR = line(['npx kinesis-local']);
const FAN_OUT_FRONT = line(['scripts/fanout-local.ts']);
// In my-topology/.
const PACKAGE = line(['mvn -q package']);
const TOPOLOGY = line(['example.Main'], ['-Dzookeeper', '-DfanOut']);
const PRODUCER = line(['node producer.mjs']);
const ZOOKEEPER = line(['ZooKeeperServerMain']);
const TOPOLOGY_OWN_ZOOKEEPER = line(['example.Main', '-Dzookeeper=']);
const STATUS = line(['KinesisSpoutTool status']);
const RESET = line(['KinesisSpoutTool reset']);
const STATUS_NODE = line(['node resources/kinesis-spout.cjs status']);
const TOPOLOGY_FAN_OUT = line(['example.Main', '-DfanOut=']);

const dir = mkdtempSync(join(tmpdir(), 'try-it-'));
const started: ChildProcess[] = [];

afterAll(async () => {
  for (const child of started.reverse()) await stop(child);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** A command of the page and what it prints, as one process group (bash, the JVM, the spouts it starts). */
interface Running {
  child: ChildProcess;
  output: () => string;
}

function start(command: string, cwd: string): Running {
  let output = '';
  const child = spawn('bash', ['-c', command], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  started.push(child);
  return { child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (!child.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGKILL');
  await exited;
}

/** A command of the page run to its end. */
function run(command: string, cwd: string): { status: number | null; output: string } {
  const result = spawnSync('bash', ['-c', command], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(!!socket.destroy()));
    socket.once('error', () => resolve(false));
  });
const healthy = (url: string) =>
  new Promise<boolean>((resolve) => {
    const request = get(url, { agent: false, timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });

/** The records a run printed (`record shardId-... order <n>`), by number. */
const printed = (output: string) =>
  [...output.matchAll(/^record (shardId-\d+) order (\d+)$/gm)].map((m) => Number(m[2]));
const ALL = Array.from({ length: 20 }, (_, i) => i);

async function until(what: string, running: Running, done: (output: string) => boolean, ms = 180_000) {
  await waitFor(
    what,
    () => {
      if (done(running.output())) return true;
      if (running.child.exitCode !== null) throw new Error(`it exited (${running.child.exitCode})`);
      return false;
    },
    ms,
  ).catch((err: Error) => {
    throw new Error(`${what}: ${err.message}; what it printed:\n${running.output().slice(-8000)}`);
  });
}

test('docs/try-it.md works as printed: its topology reads the emulator, keeps its checkpoints in a ZooKeeper of its own, the tools show and reset them, fan-out reads', async () => {
  // Every command of the page is run below, or said why not.
  expect(shellLines.filter((l) => !used.has(l) && !NOT_RUN.has(l))).toEqual([]);
  expect([...NOT_RUN.keys()].filter((l) => !shellLines.includes(l))).toEqual([]);
  for (const port of PAGE_PORTS) {
    if (!(await portFree(port))) throw new Error(`port ${port}, which docs/try-it.md's commands use, is taken`);
  }
  await mavenInstallModule();

  // 2. The emulator, in the clone.
  const emulator = start(EMULATOR, REPO);
  await waitFor('the emulator answers on 4568', () => healthy('http://127.0.0.1:4568/healthcheck'), 60_000);

  // 3. The files, as the page shows them.
  for (const block of blocks.filter((b) => b.file)) {
    const path = join(dir, block.file!);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, block.text);
  }
  expect(blocks.filter((b) => b.file).map((b) => b.file)).toEqual([
    'pom.xml',
    'src/main/java/example/Main.java',
    'producer.mjs',
    'spout.json',
  ]);

  // 4. Build, run, put.
  expect(PACKAGE).toBe('mvn -q package');
  const built = run(PACKAGE, dir);
  if (built.status !== 0) throw new Error(`${PACKAGE} failed:\n${built.output.slice(-6000)}`);
  const topology = start(TOPOLOGY, dir);
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  const [install, producer] = PRODUCER.split(' && ');
  expect(install).toBe('npm install @aws-sdk/client-kinesis @smithy/node-http-handler');
  const put = run(producer, dir);
  expect(put.output).toContain('put 20 records');
  await until(
    'every record, the metrics and the start line printed',
    topology,
    (out) => new Set(printed(out)).size === 20 && METRICS_LINE.test(out) && out.includes('running with delivery'),
  );
  expect([...new Set(printed(topology.output()))].sort((a, b) => a - b)).toEqual(ALL);
  expect(topology.output()).toMatch(/running with delivery at-least-once \(every tuple tracked\), readMode polling/);
  await stop(topology.child);

  // 5. A ZooKeeper of one's own: a run to its end, then status, reset, status from the bundled script.
  const zookeeper = start(ZOOKEEPER, dir);
  await waitFor('the ZooKeeper listens on 2182', () => listening(2182), 60_000);
  const kept = start(TOPOLOGY_OWN_ZOOKEEPER, dir);
  await until('the run with its own ZooKeeper ends', kept, () => kept.child.exitCode !== null, 240_000);
  expect(kept.child.exitCode).toBe(0);
  expect([...new Set(printed(kept.output()))].sort((a, b) => a - b)).toEqual(ALL);

  const status = run(STATUS, dir);
  expect({ status: status.status, output: status.output }).toEqual({ status: 0, output: expect.any(String) });
  for (const shard of ['shardId-000000000000', 'shardId-000000000001'])
    expect(status.output).toMatch(new RegExp(`${shard}\\s+open\\s+-\\s+-\\s+after \\d+`));

  const reset = run(RESET, dir);
  expect({ status: reset.status, output: reset.output }).toEqual({ status: 0, output: expect.any(String) });

  const after = run(STATUS_NODE, dir);
  expect({ status: after.status, output: after.output }).toEqual({ status: 0, output: expect.any(String) });
  for (const shard of ['shardId-000000000000', 'shardId-000000000001'])
    expect(after.output).toMatch(new RegExp(`${shard}\\s+open\\s+-\\s+-\\s+TRIM_HORIZON`));
  await stop(zookeeper.child);

  // 6. Fan-out: the front before the emulator, in the clone; the topology through it.
  const front = start(FAN_OUT_FRONT, REPO);
  await until('the fan-out front starts', front, (out) => out.includes('fan-out front: http://127.0.0.1:4570'), 60_000);
  const fanOut = start(TOPOLOGY_FAN_OUT, dir);
  await until(
    'every record read through fan-out',
    fanOut,
    (out) => new Set(printed(out)).size === 20 && out.includes('readMode fanOut'),
  );
  expect([...new Set(printed(fanOut.output()))].sort((a, b) => a - b)).toEqual(ALL);
  await stop(fanOut.child);
  await stop(front.child);
  await stop(emulator.child);
}, 1_200_000);
