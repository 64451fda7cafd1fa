/**
 * A new version deployed beside the running one (docs/operations.md, "Deploying a new version"): two
 * topologies of one application, told apart by the `storm.id` Storm puts in the handshake's conf, with real
 * ZooKeeper, kinesis-local and spout processes driven over pipes as ShellSpout drives them. `storm kill`
 * deactivates the old topology's tasks, waits, then stops them: deactivated beside an active topology, they
 * hand every lease over at once (nothing emitted twice, nothing lost); deactivated alone (`storm rebalance`,
 * `storm deactivate`) they keep their leases. The waits asserted are loose bounds for correctness (the old
 * code waited out the whole kill); the figures are the benchmark's (bench/deploy.ts).
 */
import { waitFor } from '../helpers/fixture';
import type { Flow } from '../helpers/flow';
import { flowSuite } from '../helpers/flowSuite';
import { sleep } from '../helpers/flowChecks';
import type { StormDriver } from '../helpers/stormDriver';

const suite = flowSuite();
/** What `storm kill -w` waits here: far longer than any hand-over may take. */
const KILL_WAIT_MS = 15_000;

async function topology(f: Flow, id: string, tasks: number[]): Promise<StormDriver[]> {
  f.topologyConf = { 'storm.id': id };
  const drivers: StormDriver[] = [];
  for (const task of tasks) drivers.push(await f.addSpout(task, tasks));
  return drivers;
}

const said = (drivers: StormDriver[], pattern: RegExp) =>
  drivers.flatMap((d) => d.logs.filter((l) => pattern.test(l.msg)).map((l) => l.msg));

async function expectEverythingOnce(f: Flow): Promise<void> {
  await f.stopProducer();
  await f.waitAllDelivered(60_000);
  await sleep(1_000);
  expect(f.concurrentReaders()).toEqual([]);
  expect(f.orderViolations()).toEqual([]);
  expect(f.unexplainedEmits()).toEqual([]);
}

test('submit green, then storm kill blue: blue hands every shard over when deactivated, not after the wait', async () => {
  const stream = await suite.newStream(4);
  const f = suite.flow(stream, { handoffTimeoutMs: 2_000 });
  const blue = await topology(f, 'blue-1-1000', [1, 2]);
  f.startProducer(20, 100);
  await waitFor('blue reads every shard', () => f.firstDelivery.size >= 80, 30_000);
  // Each task says which topology it belongs to, from the storm.id of the handshake's conf.
  expect(said(blue, /^kinesis-shell-spout task \d .* as application \S+, topology blue-1-1000$/)).toHaveLength(2);
  const green = await topology(f, 'green-2-2000', [3, 4]);
  await waitFor('green reads its share', () => green.some((d) => d.emitCount > 0), 30_000);
  const killedAt = performance.now();
  for (const d of blue) await f.deactivate(d);
  await waitFor('every lease of blue released', () => said(blue, / released at /).length >= 4, 20_000);
  const handedOverAt = performance.now();
  expect(said(blue, /another topology of this application is active: handing every lease over/)).toHaveLength(2);
  await sleep(3_000);
  // The kill's wait is still running: the records put since blue was deactivated were read by green at once.
  expect(handedOverAt - killedAt).toBeLessThan(KILL_WAIT_MS / 2);
  expect(f.longestWait(killedAt)).toBeLessThan(KILL_WAIT_MS / 2);
  for (const d of blue) await d.stop();
  await expectEverythingOnce(f);
  expect(said(green, /handing .* over/)).toEqual([]);
});

test('storm kill blue first, then submit green: blue keeps its leases until green joins, then hands them over', async () => {
  const stream = await suite.newStream(2);
  const f = suite.flow(stream, { handoffTimeoutMs: 2_000 });
  const blue = await topology(f, 'blue-1-1000', [1]);
  f.startProducer(20, 100);
  await waitFor('blue reads', () => f.firstDelivery.size >= 40, 30_000);
  for (const d of blue) await f.deactivate(d);
  await sleep(2_000);
  expect(said(blue, /handing .* over/)).toEqual([]);
  const submittedAt = performance.now();
  const green = await topology(f, 'green-2-2000', [2]);
  await waitFor(
    'green reads both shards',
    () => new Set(green[0].emits.map((e) => e.id.split(':')[0])).size === 2,
    30_000,
  );
  expect(performance.now() - submittedAt).toBeLessThan(KILL_WAIT_MS / 2);
  for (const d of blue) await d.stop();
  await expectEverythingOnce(f);
});

test('storm deactivate and activate within one topology (as storm rebalance does): the leases stay', async () => {
  const stream = await suite.newStream(2);
  const f = suite.flow(stream, { handoffTimeoutMs: 1_000 });
  const blue = await topology(f, 'blue-1-1000', [1, 2]);
  f.startProducer(20, 100);
  await waitFor('both tasks read', () => blue.every((d) => d.emitCount > 0), 30_000);
  for (const d of blue) await f.deactivate(d);
  await sleep(3_000);
  for (const d of blue) await f.activate(d);
  await sleep(1_000);
  expect(said(blue, /handing .* over|standby/)).toEqual([]);
  await expectEverythingOnce(f);
});
