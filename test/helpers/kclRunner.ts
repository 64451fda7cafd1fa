/**
 * The real KCL (test/kcl: KCL 2.x in a small Java program) as a local process against the test's
 * kinesis-local and dynalite: built once with Maven (offline first: its jars stay in ~/.m2, as the e2e
 * builds' do; rebuilt only when test/kcl's files change), run with `java`, stopped by its pid.
 * Its stdout says what it took: `record <shardId>:<sequenceNumber>[:<subSequence>]` once that record's
 * checkpoint is written, `end <shardId>` once it checkpointed a shard's end, `worker <id>` first.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const PROJECT = resolve(__dirname, '../kcl');
const SOURCES = [
  'pom.xml',
  'src/main/java/kcl/KclRunner.java',
  'src/main/java/kcl/KclBench.java',
  'src/main/java/kcl/LocalClients.java',
];

/** `KCL_VERSION` runs another KCL than the pom's (e.g. a 3.x), for a check by hand. */
const VERSION = process.env.KCL_VERSION;

function inputsHash(): string {
  const hash = createHash('sha256').update(VERSION ?? 'pom');
  for (const file of SOURCES) hash.update(file).update(readFileSync(join(PROJECT, file)));
  return hash.digest('hex');
}

/** The classpath of the KCL program, building it first when its inputs changed. */
export function buildKclRunner(): string {
  const stamp = join(PROJECT, 'target', 'inputs.sha256');
  const classpathFile = join(PROJECT, 'target', 'classpath.txt');
  const hash = inputsHash();
  if (!(existsSync(stamp) && existsSync(classpathFile) && readFileSync(stamp, 'utf8') === hash)) {
    const goals = ['-q', '-B', 'package', 'dependency:build-classpath', `-Dmdep.outputFile=${classpathFile}`];
    if (VERSION) goals.push(`-Dkcl.version=${VERSION}`);
    // Offline first: a machine that built it once needs no network; a fresh one downloads (Maven Central).
    let run = spawnSync('mvn', ['-o', ...goals], { cwd: PROJECT, encoding: 'utf8' });
    if (run.status !== 0) run = spawnSync('mvn', goals, { cwd: PROJECT, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`building test/kcl failed:\n${run.stdout}\n${run.stderr}`);
    writeFileSync(stamp, hash);
  }
  return [join(PROJECT, 'target', 'classes'), readFileSync(classpathFile, 'utf8').trim()].join(':');
}

export interface KclRun {
  readonly worker: Promise<string>;
  /** Records taken (checkpointed), in the order taken. */
  readonly records: string[];
  /** Shards whose end it checkpointed. */
  readonly ended: string[];
  readonly output: () => string;
  waitFor(what: string, done: () => boolean, timeoutMs?: number): Promise<void>;
  /** SIGKILL: the worker stops without giving up its leases, as a crashed or killed KCL application does. */
  kill(): Promise<void>;
}

export function startKcl(
  classpath: string,
  options: {
    stream: string;
    app: string;
    kinesis: string;
    dynamodb: string;
    region: string;
    failoverMs?: number;
    /** Lines `<shardId>=<N>`: take only N records of that shard, never finish it (read again at each batch). */
    limitsFile?: string;
  },
): KclRun {
  const args = ['--stream', options.stream, '--app', options.app, '--kinesis', options.kinesis];
  args.push('--dynamodb', options.dynamodb, '--region', options.region);
  if (options.failoverMs !== undefined) args.push('--failover-ms', String(options.failoverMs));
  if (options.limitsFile) args.push('--limits-file', options.limitsFile);
  const child: ChildProcess = spawn(
    'java',
    ['-Xmx256m', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-cp', classpath, 'kcl.KclRunner', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AWS_REGION: options.region } },
  );
  const records: string[] = [];
  const ended: string[] = [];
  let stdout = '';
  let stderr = '';
  let resolveWorker: (id: string) => void = () => undefined;
  const worker = new Promise<string>((done) => (resolveWorker = done));
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const [kind, value] = line.split(' ');
      if (kind === 'record') records.push(value);
      else if (kind === 'end') ended.push(value);
      else if (kind === 'worker') resolveWorker(value);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const output = () => `stdout:\n${stdout.slice(-5_000)}\nstderr:\n${stderr.slice(-5_000)}`;
  return {
    worker,
    records,
    ended,
    output,
    async waitFor(what, done, timeoutMs = 180_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        if (child.exitCode !== null) throw new Error(`KCL exited (${child.exitCode}) before ${what}\n${output()}`);
        if (Date.now() > deadline) throw new Error(`KCL: no ${what} after ${timeoutMs} ms\n${output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async kill() {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        process.kill(child.pid, 'SIGKILL');
        await exited;
      }
    },
  };
}
