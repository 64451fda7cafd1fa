/**
 * docs/try-it.md as a new user follows it: its files written as the page shows them, its emulator command's
 * settings, `mvn -q package` and its `java` line run as written, its producer run, and what the page says
 * appears does. Two liberties: free ports in place of the page's 4568/4569, and the producer's two SDK
 * packages taken from this repository's node_modules instead of an `npm install` in the folder.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startKinesisLocal, type KinesisServer } from '../helpers/kinesisServer';
import { waitFor } from '../helpers/fixture';
import { mavenInstallModule, mavenPackage, REPO } from './helpers/maven';

const PAGE = readFileSync(join(REPO, 'docs/try-it.md'), 'utf8');
const PAGE_PORT = '4568';
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
/** The one line of a shell block that runs `command`. */
const shellLine = (command: string): string => {
  const lines = blocks.filter((b) => b.lang === 'sh').flatMap((b) => b.text.split('\n'));
  const line = lines.find((l) => l.includes(command));
  if (!line) throw new Error(`docs/try-it.md has no shell line running ${command}`);
  return line;
};

let kinesis: KinesisServer | undefined;
let java: ChildProcess | undefined;
const dir = mkdtempSync(join(tmpdir(), 'try-it-'));

afterAll(async () => {
  await stopJava();
  await kinesis?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** The shell, the JVM and the spout processes it started: one process group, stopped together. */
async function stopJava(): Promise<void> {
  const child = java;
  if (!child?.pid || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGKILL');
  await exited;
}

test('docs/try-it.md works as written: a topology of your own in LocalCluster reads the emulator, prints every record and the metrics', async () => {
  await mavenInstallModule();
  // The emulator with the page's settings, on free ports.
  const settings = Object.fromEntries(
    [...shellLine('npx kinesis-local').matchAll(/(\w+)=(\S+)/g)]
      .filter(([, name]) => !name.endsWith('_PORT'))
      .map(([, name, value]) => [name, value]),
  );
  expect(settings).toHaveProperty('INITIALIZE_STREAMS');
  kinesis = await startKinesisLocal({ env: settings });
  const port = new URL(kinesis.endpoint).port;

  for (const block of blocks.filter((b) => b.file)) {
    const path = join(dir, block.file!);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, block.text.replaceAll(`127.0.0.1:${PAGE_PORT}`, `127.0.0.1:${port}`));
  }
  expect(blocks.filter((b) => b.file).map((b) => b.file)).toEqual([
    'pom.xml',
    'src/main/java/example/Main.java',
    'producer.mjs',
  ]);
  expect(shellLine('mvn -q package')).toBe('mvn -q package');
  await mavenPackage(dir);

  let stdout = '';
  java = spawn('bash', ['-c', shellLine('example.Main')], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  java.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  java.stderr!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));

  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  const producer = execFileSync(process.execPath, ['producer.mjs'], { cwd: dir, encoding: 'utf8' });
  expect(producer).toContain('put 20 records');

  const printed = () => [...stdout.matchAll(/^record (shardId-\d+) order (\d+)$/gm)].map((m) => Number(m[2]));
  await waitFor(
    'every record and the metrics printed',
    () => {
      if (java?.exitCode !== null) throw new Error(`the topology exited (${java?.exitCode})`);
      return new Set(printed()).size === 20 && METRICS_LINE.test(stdout);
    },
    150_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; what the topology printed:\n${stdout.slice(-8000)}`);
  });
  expect([...new Set(printed())].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  // The metrics consumer's lines, as the page says: the process's counters and the per-shard ones.
}, 600_000);
