/**
 * A few real coordinators (and spouts, not driven by Storm) on the simulation's ZooKeeper and Kinesis
 * without faults: for tests that measure what the coordinators do in a scripted situation.
 */
import { ListShardsCommand } from '@aws-sdk/client-kinesis';
import { loadConfig } from '../../src/config/config';
import type { KinesisApi } from '../../src/kinesis/client';
import { FaultPlan, NO_FAULTS } from './faults';
import { SimKinesis } from './kinesis/simKinesis';
import { SimStream } from './kinesis/simStream';
import { Random } from './random';
import { APPLICATION, ROOT, STREAM, WALL_BASE_MS } from './simConfig';
import { launchProcess, type ProcessWorld, type SpoutProcess } from './spoutProcess';
import { Owner, SimLoop } from './virtualTime';
import { ZkServer } from './zooKeeper/zkServer';

export interface SmallWorld {
  loop: SimLoop;
  world: Owner;
  server: ZkServer;
  stream: SimStream;
  processes: SpoutProcess[];
  /** A session outside the spout, as an operator's zkCli has. */
  operator: string;
  /** Full listings (first pages; not the cheap look past the highest id) since the last call. */
  takeFullListings(): number;
  /** What the processes reported to Storm with `error`. */
  errors: string[];
  /** Runs the virtual clock to `ms` (absolute). */
  runUntil(ms: number): Promise<void>;
  stop(): void;
}

export function smallWorld(options: {
  tasks: number;
  shards: number;
  config?: Record<string, unknown>;
  /** Most shards per listing page (default 4, to exercise paging; Kinesis gives up to 1,000). */
  listPage?: number;
  /** The processes' jitter and Kinesis's latencies (default 1). */
  seed?: number;
}): SmallWorld {
  const seed = options.seed ?? 1;
  const loop = new SimLoop();
  const server = new ZkServer(loop, new Owner('zk'), () => undefined);
  const stream = new SimStream(STREAM, WALL_BASE_MS - 86_400_000, options.shards, () => WALL_BASE_MS + loop.now);
  const plan = new FaultPlan(new Random(seed, 'faults'), { ...NO_FAULTS });
  const kinesis = new SimKinesis(loop, stream, plan, new Random(seed, 'shape'), () => undefined);
  if (options.listPage !== undefined) kinesis.maxPageSize = options.listPage;
  let fullListings = 0;
  const counted: Pick<SimKinesis, 'clientFor'> = {
    clientFor(owner) {
      const inner = kinesis.clientFor(owner);
      const send = (command: unknown, sendOptions?: unknown) => {
        // A listing's first page: later pages carry only NextToken, the cheap look ExclusiveStartShardId.
        const { input } = command as ListShardsCommand;
        if (command instanceof ListShardsCommand && !input.NextToken && !input.ExclusiveStartShardId) fullListings += 1;
        return (inner.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, sendOptions);
      };
      return { send } as unknown as KinesisApi;
    },
  };
  const config = loadConfig({
    'kinesis.spout': {
      streamName: STREAM,
      region: 'us-east-1',
      applicationName: APPLICATION,
      initialPosition: 'TRIM_HORIZON',
      zookeeper: { connect: 'sim:2181', sessionTimeoutMs: 10_000, root: ROOT },
      ...options.config,
    },
  });
  const errors: string[] = [];
  const processWorld: ProcessWorld = {
    seed,
    loop,
    config,
    taskCount: options.tasks,
    server,
    kinesis: counted as SimKinesis,
    plan,
    hooks: () => ({ trace: () => undefined, watchers: () => undefined }),
    logger: () => ({ log: () => undefined, error: (message) => errors.push(message) }),
  };
  const processes = Array.from({ length: options.tasks }, (_, slot) => launchProcess(processWorld, slot, slot));
  for (const p of processes) p.coordinator.start();
  const operator = server.openSession(Number.MAX_SAFE_INTEGER, {
    watchFired: () => undefined,
    expired: () => undefined,
  });
  return {
    loop,
    world: new Owner('world'),
    server,
    stream,
    processes,
    operator,
    errors,
    takeFullListings() {
      const count = fullListings;
      fullListings = 0;
      return count;
    },
    runUntil: (ms) => loop.run(ms, () => undefined),
    stop() {
      for (const p of processes) p.owner.state = { kind: 'dead' };
    },
  };
}
