/**
 * A randomized soak: splits, merges, processes added, killed, paused past their session and deactivated,
 * mixed while records flow. Seeded and bounded in time; the seed is printed on failure
 * (re-run with SOAK_SEED=<seed>, lengthen with SOAK_SECONDS).
 */
import { createStream, listAllShards, mergeShards, openShards, splitShard } from '../helpers/kinesisAdmin';
import { startServices, uniqueName, type Services } from '../helpers/fixture';
import { Flow } from '../helpers/flow';
import { seededRandom } from '../helpers/seededRandom';

const SEED = Number(process.env.SOAK_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SECONDS = Number(process.env.SOAK_SECONDS ?? 30);
const MAX_EMIT_PER_NEXT = 100;

let services: Services;
beforeAll(async () => {
  services = await startServices();
});
afterAll(async () => {
  await services?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test(`soak: random reshards and faults while records flow (seed ${SEED})`, async () => {
  const random = seededRandom(SEED);
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  const stream = uniqueName('soak');
  await createStream(services.client, stream, 2);
  const flow = new Flow(services, stream, uniqueName('app'), {
    zookeeper: { connect: services.zk.connectString, sessionTimeoutMs: 2_000, root: '/it' },
    maxEmitPerNext: MAX_EMIT_PER_NEXT,
  });
  const history: string[] = [];
  let faults = 0;
  try {
    await flow.addSpout();
    await flow.addSpout();
    flow.startProducer(40, 150);
    const alive = () => flow.spouts.filter((s) => s.pid > 0 && !killed.has(s.pid));
    const killed = new Set<number>();
    const end = Date.now() + SECONDS * 1_000;
    while (Date.now() < end) {
      await sleep(1_000 + random() * 1_500);
      const open = openShards(await listAllShards(services.client, stream));
      const action = pick(['split', 'merge', 'add', 'kill', 'pause', 'deactivate']);
      history.push(action);
      if (action === 'split' && open.length < 6) {
        await splitShard(services.client, stream, pick(open).ShardId!);
      } else if (action === 'merge') {
        const sorted = [...open].sort((a, b) =>
          BigInt(a.HashKeyRange!.StartingHashKey!) < BigInt(b.HashKeyRange!.StartingHashKey!) ? -1 : 1,
        );
        const pairs = sorted
          .slice(1)
          .map((b, i) => [sorted[i], b])
          .filter(([a, b]) => BigInt(a.HashKeyRange!.EndingHashKey!) + 1n === BigInt(b.HashKeyRange!.StartingHashKey!));
        if (pairs.length > 0) {
          const [a, b] = pick(pairs);
          await mergeShards(services.client, stream, a.ShardId!, b.ShardId!);
        }
      } else if (action === 'add' && alive().length < 3) {
        await flow.addSpout();
      } else if (action === 'kill' && alive().length > 1) {
        const victim = pick(alive());
        killed.add(victim.pid);
        victim.signal('SIGKILL');
        faults += 1;
      } else if (action === 'pause') {
        const victim = pick(alive());
        victim.signal('SIGSTOP');
        await sleep(3_000);
        victim.signal('SIGCONT');
        faults += 1;
      } else if (action === 'deactivate') {
        const victim = pick(alive());
        await victim.deactivate();
        await sleep(500);
        await victim.activate();
      }
    }
    await flow.stopProducer();
    await flow.waitAllDelivered(90_000);
    expect(flow.orderViolations()).toEqual([]);
    expect(flow.concurrentReaders()).toEqual([]);
    // Each fault or hand-over re-emits at most what one process had in flight.
    expect(flow.duplicates()).toBeLessThanOrEqual((faults + history.length) * MAX_EMIT_PER_NEXT);
  } catch (err) {
    throw new Error(`soak failed with SOAK_SEED=${SEED} after [${history.join(', ')}]: ${(err as Error).message}`);
  } finally {
    await flow.stop();
  }
});
