/**
 * How the spout talks to Storm: direct blocking reads and writes on Storm's pipes while commands come,
 * the event loop while Storm is quiet, and the event loop alone where stdin and stdout are not pipes.
 */
import { createStream, putRecords } from '../helpers/kinesisAdmin';
import { idsOf, readJson, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import type { DriverOptions, StormDriver } from '../helpers/stormDriver';

const suite = spoutSuite();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * About 1 KB records, so one reply to `next` is larger than a pipe holds (64 KiB), with characters of two,
 * three and four UTF-8 bytes in them (a reply is encoded into a buffer sized from its length in UTF-16).
 */
function records(n: number, prefix: string): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    partitionKey: `key-${i % 8}`,
    data: `${prefix}-${i}-${'xé€🙂'.repeat(140)}`,
  }));
}

/** The counters of a stats line printed after this call. */
async function freshStats(driver: StormDriver): Promise<Record<string, number>> {
  const seen = driver.stats().length;
  await waitFor('a stats line', () => driver.stats().length > seen);
  return driver.lastStats()!;
}

/** Whichever way a command was read and its reply written, it got exactly one sync. */
function expectOneSyncPerCommand(driver: StormDriver): void {
  expect(driver.frames.filter((f) => f.command === 'sync')).toHaveLength(driver.commandCount);
}

async function setUp(overrides: Record<string, unknown>, options: Partial<DriverOptions> = {}) {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  const app = uniqueName('app');
  const put = await putRecords(suite.services.client, stream, records(300, 'a'));
  const driver = await suite.spout(stream, app, { maxEmitPerNext: 300, statsIntervalMs: 100, ...overrides }, options);
  await driver.pump(() => driver.emits.length >= put.length);
  expect(new Set(idsOf(driver.emits))).toEqual(new Set(put.map((r) => `${r.shardId}:${r.sequenceNumber}`)));
  expect(driver.emits.map((e) => (e.tuple[1] as string).split('-')[1])).toEqual(put.map((_, i) => String(i)));
  expect(driver.emits.map((e) => e.tuple[1])).toEqual(records(put.length, 'a').map((r) => r.data));
  expectOneSyncPerCommand(driver);
  return { stream, app, put, driver };
}

test('on pipes, commands are answered directly; when Storm goes quiet the event loop gets the process back', async () => {
  const sessionTimeoutMs = 2_000;
  const { stream, app, put, driver } = await setUp({
    zookeeper: { connect: suite.services.zk.connectString, sessionTimeoutMs, root: '/it' },
    checkpointIntervalMs: 100,
  });
  // Tuples in flight, then one ack after another, each sent as its sync comes: these commands were read
  // directly. (Counted from stats lines printed before and after, not over the whole run: until the first
  // tuple the event loop reads every `next`, and with the CPUs busy those can be many.)
  const more = await putRecords(suite.services.client, stream, records(100, 'c'));
  const emitted = driver.emits.length;
  await driver.pump(() => driver.emits.length >= emitted + more.length, { onEmit: () => undefined });
  const before = await freshStats(driver);
  for (const emit of driver.emits.slice(emitted)) await driver.ack(emit.id);
  // Printed before the last ack's sync, so before the watchdog could see Storm quiet after it.
  const acked = driver.lastStats()!;
  const busy = await freshStats(driver);
  const direct = busy.directReads - before.directReads - (busy.watchdogWakes - before.watchdogWakes);
  expect(direct).toBeGreaterThan(busy.loopReads - before.loopReads);

  // No command for longer than the session timeout: only the event loop can keep the session, the
  // timers (stats, checkpoints) and the readers going.
  const statsBefore = driver.stats().length;
  await sleep(sessionTimeoutMs * 1.5);
  expect(driver.stats().length - statsBefore).toBeGreaterThanOrEqual(10);
  expect(driver.lastStats()!.watchdogWakes).toBeGreaterThan(acked.watchdogWakes);
  const last = more[more.length - 1];
  expect(
    (await readJson(suite.services.inspector, `${stateBase(stream, app)}/checkpoints/${last.shardId}`))?.position,
  ).toEqual({ kind: 'AFTER', sequenceNumber: last.sequenceNumber });

  // Storm speaks again: the same session, the same lease, the records put meanwhile.
  const later = await putRecords(suite.services.client, stream, records(20, 'b'));
  await driver.pump(() => driver.emits.length >= put.length + more.length + later.length);
  expectOneSyncPerCommand(driver);
  expect(driver.logs.map((l) => l.msg).filter((m) => /expired|disconnected|no longer ours/.test(m))).toEqual([]);
  expect(driver.errors).toEqual([]);
});

test('where stdin and stdout are sockets (or directStdio is false), the event loop alone answers, with the same results', async () => {
  for (const { overrides, options } of [
    { overrides: {}, options: { stdio: 'socketpair' as const } },
    { overrides: { directStdio: false }, options: {} },
  ]) {
    const { driver } = await setUp(overrides, options);
    await waitFor('a stats line', () => driver.lastStats()?.loopReads);
    expect(driver.lastStats()!.directReads).toBe(0);
    expect(driver.errors).toEqual([]);
  }
});

// Direct reads wait for their watchdog thread (a V8 isolate, about 10 MiB): none while the shards are idle.
test('idle shards: Storm is answered through the event loop; the first tuple starts the direct reads', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  const driver = await suite.spout(stream, uniqueName('app'), { statsIntervalMs: 100 });
  await waitFor('the shard held', () => driver.lastStats()?.shards === 1);
  // Storm's `next` while nothing is read, as its idle spout does it (about once a millisecond).
  for (let i = 0; i < 200; i++) await driver.next();
  await sleep(300);
  expect(driver.lastStats()!.directReads).toBe(0);

  const put = await putRecords(suite.services.client, stream, records(20, 'c'));
  await driver.pump(() => driver.emits.length >= put.length);
  // Storm goes on sending `next`: the watchdog thread may come online after any number of them (a new
  // V8 isolate takes a while on a loaded machine), and only a command read after that can be direct.
  await waitFor('direct reads', async () => {
    for (let i = 0; i < 50; i++) await driver.next();
    return (driver.lastStats()?.directReads ?? 0) > 0;
  });
  expectOneSyncPerCommand(driver);
  expect(driver.errors).toEqual([]);
});
