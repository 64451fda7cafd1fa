/**
 * The wire format side by side: Storm's JsonSerializer and this project's CompactSerializer, each driven
 * from a small Java main (bench/serializer/SerializerBench.java) against the real spout with its
 * synthetic source (4 shards, real ZooKeeper), as ShellSpout drives it. Rounds alternate the two; medians.
 *
 *   npm run build && NODE_NO_WARNINGS=1 npx tsx bench/serializer.ts [rounds] [seconds] [payloadBytes] [dataFormat]
 *
 * 4 synthetic shards: one alone (20,000 records a call, 5 calls a second) would cap the source at 100,000/s.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { startZooKeeper } from '../test/helpers/zookeeperServer';
import { benchConf, summarize } from './lib';

const ROOT = resolve(__dirname, '..');
const BATCH = 100;

interface Run {
  serializer: 'json' | 'compact';
  tuplesPerSecond: number;
  nodeCpuMicrosPerTuple: number;
  driverThreadCpuMicrosPerTuple: number;
  jvmCpuMicrosPerTuple: number;
  emptyNextsPerSecond: number;
}

function classpath(): string {
  const module = join(ROOT, 'storm');
  execFileSync('mvn', ['-B', '-q', 'compile'], { cwd: module, stdio: 'inherit' });
  const file = join(module, 'target', 'bench-classpath.txt');
  execFileSync('mvn', ['-B', '-q', 'dependency:build-classpath', `-Dmdep.outputFile=${file}`], {
    cwd: module,
    stdio: 'inherit',
  });
  return `${join(module, 'target', 'classes')}:${readFileSync(file, 'utf8').trim()}`;
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const seconds = Number(process.argv[3] ?? 8);
  const payload = Number(process.argv[4] ?? 100);
  const dataFormat = process.argv[5] ?? 'utf8';
  const cp = classpath();
  const spout = join(ROOT, 'bench/.build/synthetic-spout.js');
  await build({
    entryPoints: [join(ROOT, 'bench/syntheticSpout.ts')],
    outfile: spout,
    bundle: true,
    platform: 'node',
    target: 'node18',
    logLevel: 'warning',
  });
  const zk = await startZooKeeper();
  const dir = mkdtempSync(join(tmpdir(), 'serializer-bench-'));
  const runs: Run[] = [];
  const loads: string[] = [loadAverage()];
  try {
    for (let round = 0; round < rounds; round++) {
      const order: Run['serializer'][] = round % 2 === 0 ? ['json', 'compact'] : ['compact', 'json'];
      for (const serializer of order) {
        const conf = benchConf(zk, undefined, 'synthetic', `serializer-${process.pid}-${round}-${serializer}`, {
          maxEmitPerNext: BATCH,
          maxRecordsPerRequest: 10_000,
          shardBufferSize: 20_000,
          maxRecordsInMemory: 100_000,
          dataFormat,
        });
        const confFile = join(dir, `conf-${round}-${serializer}.json`);
        writeFileSync(confFile, JSON.stringify(conf));
        const result = spawnSync(
          'java',
          [
            '-cp',
            cp,
            join(ROOT, 'bench/serializer/SerializerBench.java'),
            serializer,
            String(seconds),
            '2',
            confFile,
            process.execPath,
            spout,
          ],
          {
            encoding: 'utf8',
            timeout: (seconds + 150) * 1000,
            env: {
              ...process.env,
              PAYLOAD_BYTES: String(payload),
              SYNTHETIC_SHARDS: '4',
              SYNTHETIC_RECORDS_PER_CALL: '20000',
            },
          },
        );
        if (result.status !== 0) throw new Error(`${serializer} round ${round}: ${result.stderr}`);
        const run = JSON.parse(result.stdout.trim().split('\n').pop()!) as Run;
        runs.push(run);
        console.error(`round ${round} ${serializer}: ${JSON.stringify(run)}`);
      }
      loads.push(loadAverage());
    }
  } finally {
    await zk.stop();
  }
  const of = (s: Run['serializer'], key: keyof Run) =>
    summarize(runs.filter((r) => r.serializer === s).map((r) => r[key] as number));
  const keys: (keyof Run)[] = [
    'tuplesPerSecond',
    'nodeCpuMicrosPerTuple',
    'driverThreadCpuMicrosPerTuple',
    'jvmCpuMicrosPerTuple',
    'emptyNextsPerSecond',
  ];
  const table = Object.fromEntries(keys.map((k) => [k, { json: of('json', k), compact: of('compact', k) }]));
  console.log(JSON.stringify({ rounds, seconds, payload, dataFormat, loadAverages: loads, figures: table }, null, 2));
}

void main();
