/**
 * docs/operations.md, "Status and reset": every shell line of its tool examples runs as printed by bash, in a
 * folder holding what the lines name: the module jar as Maven installs it (`kinesis-shell-spout-0.1.0.jar`),
 * the same jar as `your-topology.jar` (a topology jar carries the tool and the bundle the same way, shaded),
 * the bundle as `kinesis-spout.cjs`, and `spout.json` / `topology-conf.json` naming an application a spout
 * process started here. Two liberties, both unavoidable: the one sequence number the page prints is replaced
 * by one of this stream's (Kinesis refuses another stream's), and a `--watch` line is stopped after its first
 * screen (it redraws until Ctrl-C). A line without `--yes` is answered `yes` on stdin, as the page says it asks.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStream, putRecords } from '../helpers/kinesisAdmin';
import { type Services, spoutConf, startServices, uniqueName } from '../helpers/fixture';
import { StormDriver } from '../helpers/stormDriver';
import { waitFor } from '../helpers/fixture';
import { mavenInstallModule, REPO, SPOUT_SCRIPT } from './helpers/maven';

const PAGE = readFileSync(join(REPO, 'docs/operations.md'), 'utf8');
const SECTION = PAGE.split('\n## Status and reset\n')[1]?.split('\n## ')[0] ?? '';
const PAGE_SEQUENCE = /--to (\d{20,})/;

let services: Services | undefined;
const dir = mkdtempSync(join(tmpdir(), 'operations-tools-'));

afterAll(async () => {
  await services?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  out: string;
}

/** Runs `line` with bash in the folder; `untilOutput`: stop it (SIGINT, as Ctrl-C) once it printed something. */
function shell(line: string, untilOutput = false): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], {
      cwd: dir,
      env: { ...process.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' },
    });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${line}: no end after 120 s\n${out}`));
    }, 120_000);
    const collect = (chunk: Buffer) => {
      out += chunk.toString();
      if (untilOutput && /shardId-/.test(out)) child.kill('SIGINT');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    child.stdin.end('yes\n');
  });
}

test('docs/operations.md: the status and reset lines run as printed', async () => {
  const lines = [...SECTION.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((m) => m[1].split('\n'))
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  expect(lines.length).toBeGreaterThanOrEqual(5);
  const jar = await mavenInstallModule();
  services = await startServices();
  const stream = uniqueName('stream');
  await createStream(services.client, stream, 3);
  const put = await putRecords(
    services.client,
    stream,
    Array.from({ length: 30 }, (_, i) => ({ partitionKey: `k${i}`, data: `r${i}` })),
  );
  const app = uniqueName('app');
  const conf = spoutConf(services, stream, app);
  // An application to look at: a spout task that started, read, and stopped.
  const spout = await StormDriver.start({ conf: { 'kinesis.spout': conf } });
  await waitFor('the spout to emit', async () => (await spout.next()).length > 0, 60_000);
  await spout.stop();
  copyFileSync(jar, join(dir, 'kinesis-shell-spout-0.1.0.jar'));
  copyFileSync(jar, join(dir, 'your-topology.jar'));
  copyFileSync(SPOUT_SCRIPT, join(dir, 'kinesis-spout.cjs'));
  writeFileSync(join(dir, 'spout.json'), JSON.stringify(conf));
  writeFileSync(join(dir, 'topology-conf.json'), JSON.stringify({ 'topology.name': 'orders', 'kinesis.spout': conf }));
  const ofShard2 = put.find((p) => p.shardId === 'shardId-000000000002');
  expect(ofShard2).toBeDefined();
  for (const printed of lines) {
    const line = printed.replace(PAGE_SEQUENCE, `--to ${ofShard2!.sequenceNumber}`);
    const run = await shell(line, line.includes('--watch'));
    if (!line.includes('--watch') && run.code !== 0) throw new Error(`${printed}\nexited ${run.code}\n${run.out}`);
    expect(run.out).toMatch(/shardId-00000000000[0-2]/);
  }
}, 600_000);
