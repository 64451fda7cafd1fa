/**
 * One process of the spout as the simulation runs it: the real Coordinator and KinesisSpout, wired to the
 * fakes through its own timers (frozen while it is paused, gone when it is killed), plus what Storm and
 * the checks need to know about it.
 */
import type { SpoutConfig } from '../../src/config/config';
import type { ConnectZooKeeper } from '../../src/coordination/zooKeeper';
import { ErrorCode, SpoutError } from '../../src/errors';
import type { Logger } from '../../src/core/log';
import { Coordinator } from '../../src/stream/coordinator';
import { KinesisSpout } from '../../src/spout/spout';
import type { FaultPlan } from './faults';
import { HeldRecords } from './heldRecords';
import type { SimKinesis } from './kinesis/simKinesis';
import { Random } from './random';
import { WALL_BASE_MS } from './simConfig';
import { Owner, VirtualScheduler, type SimLoop } from './virtualTime';
import { SimZooKeeper, type ClientHooks } from './zooKeeper/zkClient';
import type { ZkServer } from './zooKeeper/zkServer';

export interface SpoutProcess {
  name: string;
  slot: number;
  /** Storm's topology id: a new version is deployed beside the old one as another topology (harness.ts). */
  topology: string;
  owner: Owner;
  coordinator: Coordinator;
  spout: KinesisSpout;
  /** Every ZooKeeper session this process opened (a lease held by any live one is this process's). */
  sessions: Set<string>;
  /** Storm stopped sending commands: a clean shutdown is under way. */
  stopping: boolean;
  /** When the last activate/deactivate reaches it: Storm's pipe keeps them in order. */
  lastToggleAt: number;
  /** What it must be holding, from what it emitted and Storm acked. */
  held: HeldRecords;
}

export interface ProcessWorld {
  seed: number;
  /** Spout tasks the topology declares (every slot): a task takes its share of them from the start. */
  taskCount: number;
  loop: SimLoop;
  config: SpoutConfig;
  server: ZkServer;
  kinesis: SimKinesis;
  plan: FaultPlan;
  /** ZooKeeper client hooks for the process named. */
  hooks(name: string): ClientHooks;
  logger(name: string): Logger;
}

/** The topology every run starts with; a run that deploys a new version starts GREEN beside it. */
export const BLUE = 'blue-1-1000';
export const GREEN = 'green-2-2000';

/**
 * A new process in `slot`; `incarnation` numbers processes over the whole run (its pid, its name). Of
 * `topology`, which declares `taskCount` tasks (default: the run's).
 */
export function launchProcess(
  world: ProcessWorld,
  slot: number,
  incarnation: number,
  topology = BLUE,
  taskCount = world.taskCount,
): SpoutProcess {
  const { loop, plan, config } = world;
  const name = `${topology === BLUE ? 'i' : 'g'}${slot}.${incarnation}`;
  const owner = new Owner(name);
  const scheduler = new VirtualScheduler(loop, owner, new Random(world.seed, `jitter-${name}`), WALL_BASE_MS);
  const sessions = new Set<string>();
  const connect: ConnectZooKeeper = (options) =>
    new Promise((resolve, reject) => {
      const fails = plan.connectFails();
      loop.after(owner, fails ? options.sessionTimeoutMs : plan.requestDelay() + plan.replyDelay(), () => {
        if (fails)
          return reject(
            new SpoutError(
              ErrorCode.ZooKeeper,
              `could not connect to ZooKeeper at ${options.connect} within ${options.sessionTimeoutMs} ms`,
              { retriable: true },
            ),
          );
        const zk = new SimZooKeeper(loop, owner, world.server, plan, options, world.hooks(name));
        sessions.add(zk.sessionId);
        resolve(zk);
      });
    });
  const logger = world.logger(name);
  const coordinator = new Coordinator({
    config,
    kinesis: world.kinesis.clientFor(owner),
    zookeeper: connect,
    logger,
    scheduler,
    member: { taskIndex: slot, taskCount, host: 'sim', pid: 1000 + incarnation, topology },
  });
  const spout = new KinesisSpout(config, coordinator, logger, scheduler);
  return {
    name,
    slot,
    topology,
    owner,
    coordinator,
    spout,
    sessions,
    stopping: false,
    lastToggleAt: 0,
    held: new HeldRecords(),
  };
}
