/**
 * What the spout says about itself at start, under the Node that runs it (SPOUT_NODE, see
 * test/helpers/spoutNode.ts): which Node.js that is, and which task it is, numbered as the member ids and
 * `status` number them. And the tools' stderr: free of the AWS SDK's NodeVersionSupportWarning.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StatusReport } from '../../src/tools/statusView';
import { createStream, putRecords } from '../helpers/kinesisAdmin';
import { spoutConf, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import { SPOUT_NODE, spoutNodeVersion } from '../helpers/spoutNode';
import { ENTRY_SCRIPT } from '../helpers/stormDriver';

const suite = spoutSuite();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const major = Number(/^v(\d+)\./.exec(spoutNodeVersion())![1]);

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'node-runtime-'));
  dirs.push(dir);
  return dir;
}

/**
 * Runs a tool with Node's warnings on (the suites set NODE_NO_WARNINGS=1, which would hide the SDK's).
 * The SDK warns below Node 22: under 22 or newer, the process is told it is Node 20, as the SDK reads it.
 */
function runTool(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', ...process.env };
  delete env.NODE_NO_WARNINGS;
  const nodeArgs: string[] = [];
  if (major >= 22) {
    const preload = join(tempDir(), 'as-node-20.cjs');
    writeFileSync(preload, "Object.defineProperty(process, 'version', { value: 'v20.20.2' });\n");
    nodeArgs.push('--require', preload);
  }
  return new Promise((resolve, reject) => {
    const child = spawn(SPOUT_NODE, [...nodeArgs, ENTRY_SCRIPT, ...args], { env });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kinesis-spout ${args.join(' ')} did not finish\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 60_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
  });
}

async function newStream(shards: number): Promise<string> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, shards);
  return stream;
}

test('the spout logs which Node.js runs it, first thing after the handshake (a warning on end-of-life Node 20)', async () => {
  const stream = await newStream(1);
  const driver = await suite.spout(stream, uniqueName('app'));
  await driver.pump(() => driver.logs.some((l) => l.msg.startsWith('kinesis-shell-spout task')));
  const line = driver.logs.find((l) => l.msg.startsWith('running on Node.js'));
  expect(line?.msg).toMatch(new RegExp(`^running on Node\\.js ${spoutNodeVersion().replace(/\./g, '\\.')}\\b`));
  expect(driver.logs[0]).toBe(line);
  // Storm's log levels: 2 info, 3 warn.
  expect(line?.level).toBe(major === 20 ? 3 : 2);
});

test('the start log numbers tasks from 0, as the member ids and status do', async () => {
  const stream = await newStream(2);
  const app = uniqueName('app');
  // Storm's task ids of one component (here 7 and 9): the spout's index is the position among them.
  const drivers = [
    await suite.spout(stream, app, {}, { taskId: 7, componentTasks: [7, 9] }),
    await suite.spout(stream, app, {}, { taskId: 9, componentTasks: [7, 9] }),
  ];
  await putRecords(suite.services.client, stream, [{ partitionKey: 'k', data: 'x' }]);
  const startLine = (i: number) =>
    drivers[i].logs.find((l) => l.msg.startsWith('kinesis-shell-spout task'))?.msg ?? '(no start line)';
  await Promise.all(drivers.map((d, i) => d.pump(() => startLine(i) !== '(no start line)')));
  expect([startLine(0), startLine(1)]).toEqual([
    expect.stringMatching(/^kinesis-shell-spout task 0 \(of 0\.\.1\) reading /),
    expect.stringMatching(/^kinesis-shell-spout task 1 \(of 0\.\.1\) reading /),
  ]);

  const members = await waitFor('both members registered', async () => {
    const ids = await suite.services.inspector.getChildren(`${stateBase(stream, app)}/members`).catch(() => []);
    return ids.length === 2 && ids;
  });
  const byPid = (pid: number) => members.find((m) => m.includes(`-${pid}-`));
  expect([byPid(drivers[0].pid), byPid(drivers[1].pid)]).toEqual([
    expect.stringMatching(/^task0-/),
    expect.stringMatching(/^task1-/),
  ]);

  const config = join(tempDir(), 'conf.json');
  writeFileSync(config, JSON.stringify({ 'kinesis.spout': spoutConf(suite.services, stream, app) }));
  const run = await runTool(['status', '--config', config, '--json']);
  expect(run.code).toBe(0);
  const report = JSON.parse(run.stdout) as StatusReport;
  const indexOf = (pid: number) => report.application.members.find((m) => m.pid === pid)?.taskIndex;
  expect([indexOf(drivers[0].pid), indexOf(drivers[1].pid)]).toEqual([0, 1]);
  const table = await runTool(['status', '--config', config]);
  expect(table.stdout).toMatch(new RegExp(`task 0 on \\S+ pid ${drivers[0].pid}\\b`));
});

test('status and reset, on a Node the AWS SDK warns about, print no NodeVersionSupportWarning (nor any other Node warning)', async () => {
  const stream = await newStream(1);
  const app = uniqueName('app');
  const driver = await suite.spout(stream, app);
  await putRecords(suite.services.client, stream, [{ partitionKey: 'k', data: 'x' }]);
  await driver.pump(() => driver.emits.length >= 1);
  await driver.stop(2_000);
  const config = join(tempDir(), 'conf.json');
  writeFileSync(config, JSON.stringify({ 'kinesis.spout': spoutConf(suite.services, stream, app) }));

  const status = await runTool(['status', '--config', config]);
  expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: '' });
  expect(status.stdout).toContain(stream);
  const reset = await runTool(['reset', '--config', config, '--to', 'TRIM_HORIZON', '--yes']);
  expect({ code: reset.code, stderr: reset.stderr }).toEqual({ code: 0, stderr: '' });
  expect(reset.stdout).toMatch(/written: 1 checkpoint/);
});
