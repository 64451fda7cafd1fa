/**
 * A topology example run in Storm's LocalCluster, in a JVM of its own: a dying worker halts the whole
 * JVM, and a hard kill must take the spout's node processes with it. The JVM leads a process group that
 * its node children join, so stopping it stops them all, by group id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Services } from '../../helpers/fixture';
import type { Build } from './maven';
import { pathWithSpoutNode, SPOUT_NODE } from '../../helpers/spoutNode';

/** Credentials for the emulator; the spout gets them only through the worker JVM's environment. */
export const AWS_ENV = { AWS_ACCESS_KEY_ID: 'e2e-access-key', AWS_SECRET_ACCESS_KEY: 'e2e-secret-key' };
const LOG4J = join(__dirname, '../../../topology-examples/java/local-log4j2.xml');

export interface Received {
  event: 'received';
  id: string;
  /** The spout component the tuple came from (the example's `moreSpouts` adds components besides `kinesis`). */
  component: string;
  /** The Storm stream it came on. */
  stream: string;
  values: Record<string, unknown>;
  dataClass: string | null;
  task: number;
  worker: number;
  sourceTask: number;
  fromOtherWorker: boolean;
  at: number;
}

/** One spout component's tuples in Storm's stats, summed over its executors (streams other than Storm's own). */
export interface SpoutStats {
  emitted: number;
  acked: number;
  failed: number;
  /** Mean complete latency of the acked (sampled) tuple trees; null when none was acked. */
  completeLatencyMs: number | null;
}

export interface Failed {
  event: 'failed';
  id: string;
  task: number;
}

export type Recorded = Received | Failed;

export interface ExampleConfig {
  topologyName: string;
  stream: string;
  region: string;
  endpoint: string;
  zookeeper: string;
  outputFile: string;
  spout: Record<string, unknown>;
  [key: string]: unknown;
}

/** The example's config file (topology-examples/README.md) with timings fast enough for tests. */
export function exampleConfig(
  services: Services,
  stream: string,
  app: string,
  dir: string,
  overrides: Record<string, unknown> = {},
): ExampleConfig {
  const { spout, ...rest } = overrides;
  return {
    topologyName: app,
    stream,
    region: services.kinesis.region,
    endpoint: services.kinesis.endpoint,
    zookeeper: services.zk.connectString,
    outputFile: join(dir, 'recorded.jsonl'),
    spoutParallelism: 3,
    workers: 2,
    boltParallelism: 2,
    ...rest,
    spout: {
      applicationName: app,
      initialPosition: 'TRIM_HORIZON',
      idlePollIntervalMs: 200,
      checkpointIntervalMs: 200,
      rebalanceIntervalMs: 300,
      shardSyncIntervalMs: 2_000,
      zookeeper: { sessionTimeoutMs: 4_000, root: '/e2e' },
      ...(spout as Record<string, unknown> | undefined),
    },
  };
}

const scratchDirs = new Set<string>();

/** A folder for one scenario: config, recorded tuples, the JVM's log and LocalCluster's own temp files. */
/** Topology conf: Storm's built-in metrics every 2 s to the example's MetricsRecorder, one JSON line each in `file`. */
export function metricsRecorderConf(file: string): Record<string, unknown> {
  return {
    'topology.builtin.metrics.bucket.size.secs': 2,
    'topology.metrics.consumer.register': [
      { class: 'io.github.kinesisshellspout.example.MetricsRecorder', 'parallelism.hint': 1, argument: file },
    ],
  };
}

export function scratch(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `e2e-${prefix}-`));
  scratchDirs.add(dir);
  return dir;
}

/** After the file's last test; KEEP_E2E_DIRS=1 keeps them (failures already carry the logs). */
export function removeScratch(): void {
  if (process.env.KEEP_E2E_DIRS) return;
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  scratchDirs.clear();
}

const running = new Set<LocalTopology>();
// Last resort if the test process ends abruptly; otherwise each JVM also stops when its stdin closes.
process.on('exit', () => {
  for (const topology of running) {
    try {
      process.kill(-topology.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export class LocalTopology {
  readonly logFile: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  /** `main` and its leading args, e.g. ['io.github...KinesisTopology'] or ['clojure.main', '-m', 'ns']. */
  constructor(
    build: Build,
    main: string[],
    readonly config: ExampleConfig,
    dir: string,
    run = 1,
  ) {
    endCutLine(config.outputFile);
    const configFile = join(dir, `config-${run}.json`);
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    this.logFile = join(dir, `jvm-${run}.log`);
    // LocalCluster's nimbus, supervisors and extracted jars: a hard kill leaves them, so keep them here.
    const javaTmp = join(dir, `java-tmp-${run}`);
    mkdirSync(javaTmp, { recursive: true });
    const fd = openSync(this.logFile, 'a');
    try {
      this.child = spawn(
        'java',
        [
          '-Xmx768m',
          '-XX:+UseSerialGC',
          `-Djava.io.tmpdir=${javaTmp}`,
          `-Dlog4j2.configurationFile=${LOG4J}`,
          '-cp',
          [build.jar, ...build.classpath].join(':'),
          ...main,
          'local',
          configFile,
        ],
        {
          cwd: dir,
          detached: true, // its own process group, inherited by the spout processes
          stdio: ['pipe', fd, fd],
          // No instance-metadata lookups from a credential chain on a machine without a network. ShellSpout
          // starts `node` from this JVM's PATH: SPOUT_NODE's folder first, so the spout runs under that Node.
          env: {
            ...process.env,
            ...AWS_ENV,
            AWS_EC2_METADATA_DISABLED: 'true',
            PATH: pathWithSpoutNode(),
            KINESIS_SPOUT_NODE: SPOUT_NODE,
          },
        },
      );
    } finally {
      closeSync(fd);
    }
    running.add(this);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
      // No java on the PATH: counts as an exit, so waits fail at once rather than time out.
      this.child.once('error', () => {
        this.exit = { code: null, signal: null };
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  log(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  /** What a failing test shows: the JVM's log (Storm's workers and the spout's log lines), trimmed. */
  logTail(chars = 20_000): string {
    const text = this.log()
      .split('\n')
      .filter((line) => !/ReadClusterState: It has taken/.test(line))
      .join('\n');
    return `--- LocalCluster log ${this.logFile} (pid ${this.pid}, exit ${JSON.stringify(this.exit ?? 'running')})\n${text.slice(-chars)}`;
  }

  recorded(): Recorded[] {
    return readRecorded(this.config.outputFile);
  }

  received(): Received[] {
    return this.recorded().filter((r): r is Received => r.event === 'received');
  }

  /** Sends a command to the example's LocalRunner and waits for its answer line. */
  async control(command: string, timeoutMs = 30_000): Promise<void> {
    const answered = () =>
      this.log()
        .split('\n')
        .filter((l) => l.startsWith(`control: ${command} `));
    const before = answered().length;
    this.child.stdin!.write(`${command}\n`);
    await this.waitFor(`control: ${command}`, () => answered().length > before, timeoutMs);
    const answer = answered()[before];
    if (!answer.endsWith(' ok')) throw new Error(`${answer}\n${this.logTail()}`);
  }

  /**
   * Per spout component, Storm's own figures as Nimbus has them from the workers' heartbeats (what the
   * Storm UI shows, all time): the example's `stats` command.
   */
  async spoutStats(): Promise<Record<string, SpoutStats>> {
    await this.control('stats');
    const lines = this.log()
      .split('\n')
      .filter((l) => l.startsWith('topology stats: '));
    return JSON.parse(lines.at(-1)!.slice('topology stats: '.length)) as Record<string, SpoutStats>;
  }

  /** Polls, failing early with the log if the JVM dies (a halted worker ends LocalCluster). */
  async waitFor<T>(
    what: string,
    probe: () => T | undefined | false | Promise<T | undefined | false>,
    timeoutMs = 60_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      if (this.exit) throw new Error(`LocalCluster exited while waiting for ${what}\n${this.logTail()}`);
      if (Date.now() > deadline)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${this.logTail()}`);
      await sleep(200);
    }
  }

  /** The node processes ShellSpout started, from the worker log ("Launched subprocess with pid N"). */
  spoutPids(): number[] {
    return [...this.log().matchAll(/Launched subprocess with pid (\d+)/g)].map((m) => Number(m[1]));
  }

  /**
   * Graceful: LocalCluster shuts its workers down, ShellSpout SIGTERMs the spouts, they flush and exit.
   * Resolves true if every process of the group exited by itself (no SIGKILL was needed).
   */
  async stop(graceMs = 30_000): Promise<boolean> {
    if (!this.exit) {
      this.child.stdin!.end('kill\n');
      // The grace timer is cleared once the JVM exits: left pending, it kept jest's worker alive for up to
      // graceMs after the last test ("A worker process has failed to exit gracefully").
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([this.exited, new Promise((resolve) => (grace = setTimeout(resolve, graceMs)))]);
      clearTimeout(grace);
    }
    return this.killHard(10_000);
  }

  /** Spout processes still alive, and the last lifecycle line each logged (activated / deactivated). */
  liveSpouts(): Map<number, string | undefined> {
    const state = new Map<number, string | undefined>();
    const alive = new Set(groupMembers(this.pid));
    for (const pid of this.spoutPids()) if (alive.has(pid)) state.set(pid, undefined);
    for (const m of this.log().matchAll(/ShellLog pid:(\d+), name:\S+ (activated|deactivated)/g)) {
      if (state.has(Number(m[1]))) state.set(Number(m[1]), m[2]);
    }
    return state;
  }

  /** Storm (de)activates asynchronously: nimbus answers before the workers have told their spouts. */
  async waitSpouts(state: 'activated' | 'deactivated', count: number, timeoutMs = 30_000): Promise<void> {
    await this.waitFor(
      `${count} spouts ${state}`,
      () => {
        const states = [...this.liveSpouts().values()];
        return states.length === count && states.every((s) => s === state);
      },
      timeoutMs,
    );
  }

  /**
   * SIGKILL to the whole group; resolves once no process of it is left, with false if any had to be
   * killed. `aliveMs` lets stragglers finish first.
   */
  async killHard(aliveMs = 0): Promise<boolean> {
    const pgid = this.pid;
    const deadline = Date.now() + aliveMs;
    while (groupMembers(pgid).length > 0 && Date.now() < deadline) await sleep(100);
    const stragglers = groupMembers(pgid).length > 0;
    if (stragglers) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // the group emptied meanwhile
      }
    }
    await this.exited;
    const end = Date.now() + 10_000;
    while (groupMembers(pgid).length > 0) {
      if (Date.now() > end) throw new Error(`processes of group ${pgid} survived SIGKILL: ${groupMembers(pgid)}`);
      await sleep(100);
    }
    running.delete(this);
    return !stragglers;
  }
}

/** Runs a test body; on failure, the LocalCluster logs (Storm's workers, the spouts' log lines) go into the error. */
export async function withLogs(topologies: () => LocalTopology[], body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    (err as Error).message += `\n${topologies()
      .map((t) => t.logTail(10_000))
      .join('\n')}`;
    throw err;
  }
}

/** Stops whatever a failed test left running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((t) => t.killHard()));
}

/** Live (non-zombie) processes of a process group, from /proc. */
export function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the parenthesised command: state, ppid, pgrp, ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') pids.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

export function processEnv(pid: number): Record<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return Object.fromEntries(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

export function processCwd(pid: number): string {
  return readlinkSync(`/proc/${pid}/cwd`);
}

/** The executable a process runs (symbolic links resolved). */
export function processExe(pid: number): string {
  return readlinkSync(`/proc/${pid}/exe`);
}

/**
 * A JVM killed hard can leave the last line of the output cut short (Linux ends a write at a page boundary
 * for a fatal signal); that event's tuple was not acked. The next run appends to the same file: the cut
 * part is dropped first, so that it does not run into the next run's first line.
 */
function endCutLine(file: string): void {
  if (!existsSync(file)) return;
  const text = readFileSync(file);
  if (text.length > 0 && text[text.length - 1] !== 0x0a) truncateSync(file, text.lastIndexOf(0x0a) + 1);
}

export function readRecorded(file: string): Recorded[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  // A hard kill may cut the last line short; every other line must parse.
  return lines.flatMap((line, i) => {
    try {
      return [JSON.parse(line) as Recorded];
    } catch (err) {
      if (i === lines.length - 1) return [];
      throw err;
    }
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
