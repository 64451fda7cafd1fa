/**
 * Enhanced fan-out on real servers, for what only fan-out has: the spout in `readMode: "fanOut"` against
 * the fan-out front (fanOutServer.ts) before kinesis-local. A kill of a subscription's owner (the taker
 * meets ResourceInUseException), subscriptions ending in the middle of a backlog, and the faults AWS's
 * event streams have (a reset stream, an exception event, throttled subscribes, a stall): every record
 * delivered, per-key order, one reader per shard, and with one process no record emitted twice (a renewal
 * starts after the last event delivered).
 */
import { waitFor } from '../helpers/fixture';
import { expectFlowInvariants, sleep } from '../helpers/flowChecks';
import { DEFAULT_FAN_OUT_SETTINGS } from '../helpers/fanOutServer';
import { flowSuite } from '../helpers/flowSuite';

const suite = flowSuite({ readMode: 'fanOut' });

afterEach(() => {
  Object.assign(suite.front.settings, { ...DEFAULT_FAN_OUT_SETTINGS, activationMs: 200 });
});

const subscriptionsOf = (stream: string) =>
  suite.front.subscriptions.filter((s) => s.consumerArn.includes(`:stream/${stream}/consumer/`));

test('the owner of subscriptions killed: the taker retries ResourceInUseException, then reads on, nothing lost', async () => {
  const front = suite.front;
  const f = suite.flow(await suite.newStream(4));
  const [victim] = [await f.addSpout(), await f.addSpout()];
  f.startProducer();
  const readsOf = (pid: number) => [...f.emitSpans.keys()].filter((shard) => f.readersOf(shard).includes(pid));
  await waitFor(
    'both processes to read',
    () => readsOf(victim.pid).length > 0 && readsOf(f.spouts[1].pid).length > 0,
    60_000,
  );
  // From now on the window is long enough that the taker of the victim's shards always meets it.
  front.settings.inUseWindowMs = 20_000;
  const orphaned = [...f.emitSpans.keys()].filter((shard) => f.readersOf(shard).includes(victim.pid));
  victim.signal('SIGKILL');
  await victim.exited;
  const since = front.subscribeCalls.length;
  await waitFor(
    'the survivor to subscribe to every orphaned shard',
    () =>
      orphaned.every((shard) =>
        front.subscribeCalls.slice(since).some((c) => c.shardId === shard && c.outcome === 'ok'),
      ),
    60_000,
  );
  await sleep(1_000);
  await expectFlowInvariants(f, { maxDuplicates: 4 * 100 + 200, withinMs: 60_000 });
  const refused = front.subscribeCalls.slice(since).filter((c) => c.outcome === 'ResourceInUseException');
  expect(refused.map((c) => c.shardId)).toEqual(expect.arrayContaining(orphaned));
});

test('subscriptions ending in the middle of a backlog: each renewal starts after the last event, no duplicate', async () => {
  const front = suite.front;
  // A backlog that takes several lifetimes to read at the offered rate.
  Object.assign(front.settings, { lifetimeMs: 1_000, inUseWindowMs: 500, maxBytesPerSecond: 40_000 });
  const f = suite.flow(await suite.newStream(1));
  await f.putBatch(2_000);
  await f.addSpout();
  await waitFor(
    'two subscriptions to end in the backlog',
    () => subscriptionsOf(f.stream).filter((s) => s.ended === 'lifetime' && s.recordsPushed > 0).length >= 2,
  );
  front.settings.maxBytesPerSecond = 2 * 1024 * 1024;
  await expectFlowInvariants(f, { maxDuplicates: 0, withinMs: 60_000 });
  expect(f.unexplainedEmits()).toEqual([]);
});

test('a reset stream, exception events, throttled subscribes and a stall: read on from the last event', async () => {
  const front = suite.front;
  // After a fault the reader subscribes again at once: a short in-use window keeps its retries few.
  front.settings.inUseWindowMs = 1_000;
  const f = suite.flow(await suite.newStream(2));
  await f.addSpout();
  f.startProducer();
  await waitFor('both shards read', () => f.emitSpans.size >= 2, 30_000);
  const rules = [
    front.inject({ kind: 'reset', shardId: 'shardId-000000000000', times: 1 }),
    front.inject({ kind: 'reset', how: 'destroySocket', shardId: 'shardId-000000000001', times: 1 }),
  ];
  await waitFor('both resets', () => rules.every((r) => r.injected === 1), 30_000);
  rules.push(front.inject({ kind: 'errorEvent', exceptionType: 'InternalFailureException', times: 1 }));
  rules.push(front.inject({ kind: 'errorEvent', exceptionType: 'KMSThrottlingException', times: 1 }));
  await waitFor('both exception events', () => rules.slice(2).every((r) => r.injected === 1), 30_000);
  rules.push(front.inject({ kind: 'refuse', type: 'LimitExceededException', times: 3 }));
  front.expire();
  await waitFor('three throttled subscribes', () => rules[4].injected === 3, 30_000);
  const stall = front.inject({ kind: 'stall', shardId: 'shardId-000000000000', times: 1 });
  await waitFor('the stall', () => stall.injected === 1, 30_000);
  await sleep(1_000);
  stall.remove();
  await expectFlowInvariants(f, { maxDuplicates: 0, withinMs: 60_000 });
  expect(f.unexplainedEmits()).toEqual([]);
});

test('renewals every 300 ms against a server counting every arrival: no call refused for the rate, nothing reported', async () => {
  const front = suite.front;
  // AWS's one call per second per consumer and shard, on arrival times, refused calls counted too; subscriptions
  // that end after 300 ms, so that the reader's own spacing is all that keeps its calls apart.
  Object.assign(front.settings, { subscribeLimitCountsRefused: true, lifetimeMs: 300, inUseWindowMs: 200 });
  const f = suite.flow(await suite.newStream(2));
  const spout = await f.addSpout();
  f.startProducer(20, 100);
  const ofStream = () => front.subscribeCalls.filter((c) => c.consumerArn.includes(`:stream/${f.stream}/consumer/`));
  await waitFor('twenty renewals', () => ofStream().filter((c) => c.outcome === 'ok').length >= 20, 60_000);
  await expectFlowInvariants(f, { maxDuplicates: 0, withinMs: 60_000 });
  expect(ofStream().filter((c) => c.outcome !== 'ok')).toEqual([]);
  expect(spout.errors).toEqual([]);
});
