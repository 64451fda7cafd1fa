/**
 * Nimbus and one supervisor as separate JVMs from a Storm home, the commands an operator runs
 * (`storm jar`, `storm deactivate`, `storm rebalance`, ...) as the Java classes the `storm` script runs,
 * and the worker JVMs the supervisor starts, found in its process tree.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import zookeeper from 'node-zookeeper-client';
import type { StormHome } from './stormHome';

/** The class the supervisor starts for each worker (under LogWriter, a JVM of its own). */
export const WORKER_MAIN = 'org.apache.storm.daemon.worker.Worker';
const LOG_WRITER_MAIN = 'org.apache.storm.LogWriter';

export interface Daemon {
  name: string;
  pid: number;
  logFile: string;
  exited(): boolean;
}

export class StormCluster {
  readonly nimbus: Daemon;
  readonly supervisor: Daemon;
  private readonly children: ChildProcess[] = [];

  constructor(
    readonly home: StormHome,
    readonly nimbusPort: number,
    env: NodeJS.ProcessEnv,
  ) {
    this.nimbus = this.daemon('nimbus', 'org.apache.storm.daemon.nimbus.Nimbus', env);
    // Workers inherit the supervisor's environment: the spout's AWS credentials come from there.
    this.supervisor = this.daemon('supervisor', 'org.apache.storm.daemon.supervisor.Supervisor', env);
  }

  private daemon(name: string, main: string, env: NodeJS.ProcessEnv): Daemon {
    const logFile = join(this.home.logDir, `${name}.out`);
    const fd = openSync(logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn('java', [...this.jvm(name), '-cp', this.home.daemonClasspath, main], {
        cwd: this.home.dir,
        env,
        stdio: ['ignore', fd, fd],
      });
    } finally {
      closeSync(fd);
    }
    this.children.push(child);
    child.once('error', () => undefined);
    return {
      name,
      pid: child.pid ?? -1,
      logFile,
      exited: () => child.exitCode !== null || child.signalCode !== null || child.pid === undefined,
    };
  }

  /** The system properties the `storm` script gives its JVMs. */
  private jvm(name: string): string[] {
    return [
      '-Xmx256m',
      '-XX:+UseSerialGC',
      `-Dstorm.home=${this.home.dir}`,
      `-Dstorm.log.dir=${this.home.logDir}`,
      `-Dlog4j.configurationFile=${join(this.home.dir, 'log4j2', 'cluster.xml')}`,
      `-Dlogfile.name=${name}.log`,
      `-Ddaemon.name=${name}`,
    ];
  }

  log(daemon: Daemon): string {
    return existsSync(daemon.logFile) ? readFileSync(daemon.logFile, 'utf8') : '';
  }

  /** Nimbus answers on its thrift port and the supervisor has registered in ZooKeeper. */
  async waitReady(supervisorRegistered: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
    await this.waitFor('nimbus thrift port', () => portOpen(this.nimbusPort), timeoutMs);
    await this.waitFor('the supervisor to register', supervisorRegistered, timeoutMs);
  }

  /** Polls, failing early (with the daemons' logs) if either daemon dies. */
  async waitFor<T>(
    what: string,
    probe: () => T | undefined | false | Promise<T | undefined | false>,
    timeoutMs = 60_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      for (const d of [this.nimbus, this.supervisor])
        if (d.exited()) throw new Error(`${d.name} exited while waiting for ${what}\n${this.logTail()}`);
      if (Date.now() > deadline)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${this.logTail()}`);
      await sleep(250);
    }
  }

  /**
   * `storm jar <jar> <main> <args>`: the topology jar first, storm-client's classpath, and `storm.jar`
   * naming the jar StormSubmitter uploads.
   */
  submit(jar: string, main: string, args: string[]): Promise<string> {
    return this.run('storm jar', [
      '-Xmx256m',
      '-XX:+UseSerialGC',
      `-Dstorm.home=${this.home.dir}`,
      `-Dstorm.jar=${jar}`,
      '-cp',
      `${jar}:${this.home.clientClasspath}`,
      main,
      ...args,
    ]);
  }

  /** `storm <command> <args>`: deactivate, activate, rebalance, kill, list, as storm-core's command classes. */
  command(
    name: 'Activate' | 'Deactivate' | 'Rebalance' | 'KillTopology' | 'ListTopologies',
    args: string[],
  ): Promise<string> {
    return this.run(name, [
      '-Xmx128m',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      `-Dstorm.home=${this.home.dir}`,
      '-cp',
      this.home.daemonClasspath,
      `org.apache.storm.command.${name}`,
      ...args,
    ]);
  }

  /** What `storm list` says of a topology: its status (ACTIVE, INACTIVE, REBALANCING, ...) and Nimbus's count of its workers. */
  async topology(name: string): Promise<{ status: string; workers: number } | undefined> {
    const output = await this.command('ListTopologies', []);
    const line = output.split('\n').find((l) => l.split(/\s+/)[0] === name);
    if (!line) return undefined;
    const [, status, , workers] = line.trim().split(/\s+/);
    return { status, workers: Number(workers) };
  }

  /** Asynchronous, so that the records keep being put while a command's JVM starts. */
  private run(what: string, args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn('java', args, { cwd: this.home.dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout!.on('data', (chunk) => (output += chunk));
      child.stderr!.on('data', (chunk) => (output += chunk));
      const timer = setTimeout(() => kill(child.pid ?? -1, 'SIGKILL'), 120_000);
      child.once('error', (err) => reject(err));
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve(output);
        else
          reject(new Error(`${what} ${args.slice(-3).join(' ')} failed (${code ?? signal}):\n${output.slice(-4000)}`));
      });
    });
  }

  /** Worker JVMs alive under the supervisor (it starts LogWriter, whose arguments are the worker's command, which starts the worker). */
  workerPids(): number[] {
    return descendants(this.supervisor.pid).filter((pid) => {
      const args = cmdline(pid);
      return args.includes(WORKER_MAIN) && !args.includes(LOG_WRITER_MAIN);
    });
  }

  /** The worker logs: ShellSpout's and the spouts' lines, one file per worker slot (appended across restarts). */
  workerLogs(): string[] {
    const root = join(this.home.logDir, 'workers-artifacts');
    const files: string[] = [];
    const walk = (dir: string): void => {
      if (!existsSync(dir)) return;
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name === 'worker.log') files.push(path);
      }
    };
    walk(root);
    return files;
  }

  workerLog(): string {
    return this.workerLogs()
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
  }

  logTail(chars = 6_000): string {
    const parts = [this.nimbus, this.supervisor].map(
      (d) => `--- ${d.name} (pid ${d.pid}) ${d.logFile}\n${this.log(d).slice(-chars)}`,
    );
    for (const file of this.workerLogs()) parts.push(`--- ${file}\n${readFileSync(file, 'utf8').slice(-chars)}`);
    return parts.join('\n');
  }

  /**
   * Every process of the cluster, by pid: the supervisor's descendants first (workers, their LogWriters,
   * the spouts' node processes: the supervisor leaves its workers running when it stops), then the daemons.
   */
  async stop(): Promise<void> {
    const tree = [...descendants(this.supervisor.pid), ...descendants(this.nimbus.pid)];
    for (const pid of tree) kill(pid, 'SIGKILL');
    for (const child of this.children) if (child.pid !== undefined) kill(child.pid, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (this.children.some((c) => c.exitCode === null && c.signalCode === null) && Date.now() < deadline)
      await sleep(100);
    for (const child of this.children)
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) kill(child.pid, 'SIGKILL');
    const end = Date.now() + 10_000;
    while ([...tree, ...this.children.map((c) => c.pid ?? -1)].some(alive) && Date.now() < end) await sleep(100);
  }
}

export function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Alive and not a zombie. */
export function alive(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

function procStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** Live descendants of a process, from /proc (parents before children). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = procStat(Number(name));
    if (!stat || stat.state === 'Z') continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(name)]);
  }
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Children of a znode, with a client of its own ([] if the node does not exist or ZooKeeper does not answer). */
export function zkChildren(connectString: string, path: string, timeoutMs = 5_000): Promise<string[]> {
  return new Promise((resolve) => {
    const client = zookeeper.createClient(connectString, { sessionTimeout: timeoutMs });
    const timer = setTimeout(() => done([]), timeoutMs);
    const done = (children: string[]): void => {
      clearTimeout(timer);
      client.close();
      resolve(children);
    };
    client.once('connected', () => client.getChildren(path, (err, children) => done(err ? [] : children)));
    client.connect();
  });
}
