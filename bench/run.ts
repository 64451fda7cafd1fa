/**
 * `npm run bench`: protocol throughput and CPU per tuple of the spout (real process, real ZooKeeper,
 * synthetic record source) beside the ceiling (a process that only answers the protocol), both on the same
 * Storm-shaped driver (every ack a round trip waiting for sync), alternating in one run.
 * Writes bench/results/<date>.json and regenerates the README's benchmark table from it.
 */
import { execSync } from 'node:child_process';
import { build } from 'esbuild';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { StormDriver } from '../test/helpers/stormDriver';
import { startZooKeeper } from '../test/helpers/zookeeperServer';

const ROOT = resolve(__dirname, '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PAYLOADS = [100, 1024];
const BATCH = 100;
const CLOCK_TICKS = 100; // USER_HZ on Linux: /proc/<pid>/stat counts CPU time in 1/100 s

interface Run {
  tuplesPerSecond: number;
  cpuMicrosPerTuple: number;
}

function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
}

async function measure(script: string, conf: Record<string, unknown>, payload: number): Promise<Run> {
  const driver = await StormDriver.start({ script, conf, keepHistory: false, env: { PAYLOAD_BYTES: String(payload), CEILING_BATCH: String(BATCH) } });
  try {
    let acked = 0;
    const onEmit = async (emit: { id: string }) => {
      await driver.ack(emit.id);
      acked += 1;
    };
    if (!(await driver.pump(() => acked > 0, { timeoutMs: 20_000, onEmit }))) throw new Error(`no tuple from ${script}\n${driver.logText()}`);
    const warm = Date.now() + 1_000;
    await driver.pump(() => Date.now() > warm, { onEmit });
    const cpu0 = cpuMicros(driver.pid);
    const count0 = acked;
    const t0 = performance.now();
    const end = Date.now() + SECONDS * 1_000;
    await driver.pump(() => Date.now() > end, { timeoutMs: SECONDS * 1_000 + 5_000, onEmit });
    const elapsed = (performance.now() - t0) / 1_000;
    const tuples = acked - count0;
    return { tuplesPerSecond: Math.round(tuples / elapsed), cpuMicrosPerTuple: Math.round((cpuMicros(driver.pid) - cpu0) / tuples) };
  } finally {
    await driver.stop(3_000);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = (xs: number[]) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });

async function main(): Promise<void> {
  const spoutScript = join(ROOT, 'bench/.build/synthetic-spout.js');
  await build({ entryPoints: [join(ROOT, 'bench/syntheticSpout.ts')], outfile: spoutScript, bundle: true, platform: 'node', target: 'node18', logLevel: 'warning' });
  const ceilingScript = join(ROOT, 'bench/ceiling.mjs');
  const zk = await startZooKeeper();
  const results = [];
  try {
    for (const payload of PAYLOADS) {
      const runs: Record<'ceiling' | 'spout', Run[]> = { ceiling: [], spout: [] };
      for (let round = 0; round < ROUNDS; round += 1) {
        const order = round % 2 === 0 ? (['ceiling', 'spout'] as const) : (['spout', 'ceiling'] as const);
        for (const target of order) {
          const conf = {
            'kinesis.spout': {
              streamName: 'synthetic', region: 'us-east-1', applicationName: `bench-${process.pid}-${payload}-${round}`, initialPosition: 'TRIM_HORIZON',
              zookeeper: { connect: zk.connectString }, maxEmitPerNext: BATCH, maxRecordsPerRequest: 10_000, shardBufferSize: 20_000, maxRecordsInMemory: 100_000,
            },
          };
          const run = await measure(target === 'ceiling' ? ceilingScript : spoutScript, conf, payload);
          runs[target].push(run);
          process.stdout.write(`payload ${payload} B round ${round + 1} ${target}: ${run.tuplesPerSecond} tuples/s, ${run.cpuMicrosPerTuple} us CPU/tuple\n`);
        }
      }
      const ratios = runs.spout.map((s, i) => s.tuplesPerSecond / runs.ceiling[i].tuplesPerSecond);
      results.push({
        payloadBytes: payload,
        ceiling: { tuplesPerSecond: summary(runs.ceiling.map((r) => r.tuplesPerSecond)), cpuMicrosPerTuple: summary(runs.ceiling.map((r) => r.cpuMicrosPerTuple)) },
        spout: { tuplesPerSecond: summary(runs.spout.map((r) => r.tuplesPerSecond)), cpuMicrosPerTuple: summary(runs.spout.map((r) => r.cpuMicrosPerTuple)) },
        spoutToCeiling: summary(ratios.map((r) => Math.round(r * 1000) / 1000)),
      });
    }
  } finally {
    await zk.stop();
  }
  const commit = execSync('git rev-parse --short HEAD', { cwd: ROOT }).toString().trim();
  const report = {
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30) },
    node: process.version,
    commit,
    settings: { rounds: ROUNDS, secondsPerRun: SECONDS, batchPerNext: BATCH, driver: 'Node, every ack waits for its sync' },
    protocol: results,
  };
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const file = join(ROOT, `bench/results/${report.date.slice(0, 19).replace(/:/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`wrote ${file}\n`);
  updateReadme(report);
}

function updateReadme(report: { date: string; machine: { cpu: string; cores: number; memoryGiB: number }; node: string; commit: string; protocol: Array<Record<string, any>> }): void {
  const readme = join(ROOT, 'README.md');
  const text = readFileSync(readme, 'utf8');
  const start = '<!-- bench:start -->';
  const end = '<!-- bench:end -->';
  if (!text.includes(start) || !text.includes(end)) return;
  const rows = report.protocol.map((r) =>
    `| ${r.payloadBytes} B | ${r.ceiling.tuplesPerSecond.median} (${r.ceiling.tuplesPerSecond.min}–${r.ceiling.tuplesPerSecond.max}) | ${r.spout.tuplesPerSecond.median} (${r.spout.tuplesPerSecond.min}–${r.spout.tuplesPerSecond.max}) | ${Math.round(r.spoutToCeiling.median * 100)} % | ${r.ceiling.cpuMicrosPerTuple.median} | ${r.spout.cpuMicrosPerTuple.median} |`,
  );
  const table = [
    start,
    `Measured ${report.date.slice(0, 10)} on ${report.machine.cores} cores (${report.machine.cpu}), ${report.machine.memoryGiB} GiB, Node ${report.node}, commit ${report.commit}; medians (min–max) of alternating runs.`,
    '',
    '| payload | ceiling tuples/s | spout tuples/s | spout / ceiling | ceiling µs CPU/tuple | spout µs CPU/tuple |',
    '|---|---|---|---|---|---|',
    ...rows,
    end,
  ].join('\n');
  writeFileSync(readme, text.slice(0, text.indexOf(start)) + table + text.slice(text.indexOf(end) + end.length));
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
