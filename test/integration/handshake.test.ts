/**
 * The handshake as Storm's JsonSerializer.connect sees it: it takes the pid from the first frame it reads
 * and waits for it with no timeout. Whatever else happens before or during the handshake (a pid file that
 * cannot be written, a warning from a module preloaded with NODE_OPTIONS) comes after the pid, and the
 * spout then reads as usual. Real ZooKeeper and kinesis-local, the built spout on OS pipes.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStream, putRecords } from '../helpers/kinesisAdmin';
import { idsOf, spoutSuite, uniqueName } from '../helpers/fixture';
import type { DriverOptions, StormDriver } from '../helpers/stormDriver';

const suite = spoutSuite();

/** The spout, started as Storm starts it, but given 15 s for its pid (Storm would wait for it forever). */
function start(stream: string, options: Partial<DriverOptions>): Promise<StormDriver> {
  return suite.spout(stream, uniqueName('app'), {}, { pidTimeoutMs: 15_000, ...options });
}

/** Puts records and checks that the spout emits every one of them, so the process did more than answer. */
async function expectReads(driver: StormDriver, stream: string): Promise<void> {
  const put = await putRecords(
    suite.services.client,
    stream,
    Array.from({ length: 20 }, (_, i) => ({ partitionKey: `k${i}`, data: `r${i}` })),
  );
  expect(await driver.pump(() => driver.emits.length >= put.length)).toBe(true);
  expect(new Set(idsOf(driver.emits))).toEqual(new Set(put.map((r) => `${r.shardId}:${r.sequenceNumber}`)));
}

test('a pid file that cannot be written: the pid is the first frame, the error follows, and the spout reads', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  // A path below a regular file cannot be created, whoever runs the test (root included).
  const dir = mkdtempSync(join(tmpdir(), 'spout-pidfile-'));
  writeFileSync(join(dir, 'not-a-directory'), '');
  const pidDir = join(dir, 'not-a-directory', 'pids');

  const driver = await start(stream, { pidDir });
  expect(driver.frames[0]).toEqual({ pid: expect.any(Number) });
  expect(driver.pid).toBeGreaterThan(0);
  await expectReads(driver, stream);
  const pidFile = join(pidDir, String(driver.pid));
  expect(driver.errors.filter((e) => e.includes(`cannot write the pid file ${pidFile}`))).toHaveLength(1);
  expect(driver.errors.filter((e) => !e.includes('pid file'))).toEqual([]);
});

test('a warning from a module preloaded with NODE_OPTIONS reaches Storm as a log after the pid, never before', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  // What an APM agent does when it loads: a warning, emitted before the spout's own code runs.
  const agent = join(mkdtempSync(join(tmpdir(), 'spout-agent-')), 'agent.js');
  writeFileSync(agent, "process.emitWarning('agent instrumentation loaded', 'AgentWarning');\n");

  const driver = await start(stream, { env: { NODE_OPTIONS: `--require ${agent}` } });
  expect(driver.frames[0]).toEqual({ pid: expect.any(Number) });
  expect(driver.pid).toBeGreaterThan(0);
  await expectReads(driver, stream);
  const warnings = driver.logs.filter((l) => l.msg === 'node warning: AgentWarning: agent instrumentation loaded');
  expect(warnings).toHaveLength(1);
  expect(driver.errors).toEqual([]);
});

test('what the deploy runs with is logged once at start, through Storm, after the pid', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  const driver = await start(stream, {});
  expect(driver.frames[0]).toEqual({ pid: expect.any(Number) });
  await expectReads(driver, stream);
  const running = driver.logs.filter((l) => l.msg.startsWith('running with '));
  expect(running.map((l) => l.msg)).toEqual([
    expect.stringMatching(
      /^running with delivery at-least-once \(every tuple tracked\), readMode \w+, balance count, ordering parents-acked, initialPosition \w+ /,
    ),
  ]);
  expect(running[0].level).toBe(2);
});
