/** Real servers for one test file, spout configurations with fast timings, and ZooKeeper inspection. */
import { connect } from 'node:net';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { ZkSession } from '../../src/coordination/zk';
import { kinesisClient } from './kinesisAdmin';
import { startKinesisLocal, type KinesisServer } from './kinesisServer';
import { StormDriver, type DriverOptions, type Emit } from './stormDriver';
import { startZooKeeper, type ZooKeeperServer } from './zookeeperServer';

export interface Services {
  zk: ZooKeeperServer;
  kinesis: KinesisServer;
  client: KinesisClient;
  inspector: ZkSession;
  stop(): Promise<void>;
}

/** ZooKeeper and a Kinesis emulator (kinesis-local unless told: kinesalite fills much faster). */
export async function startServices(startKinesis: () => Promise<KinesisServer> = startKinesisLocal): Promise<Services> {
  const [zk, kinesis] = await Promise.all([startZooKeeper(), startKinesis()]);
  const client = kinesisClient(kinesis);
  const inspector = await ZkSession.connect({ connect: zk.connectString, sessionTimeoutMs: 10_000 });
  return {
    zk,
    kinesis,
    client,
    inspector,
    async stop() {
      inspector.close();
      client.destroy();
      await Promise.all([zk.stop(), kinesis.stop()]);
    },
  };
}

let counter = 0;
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** A `kinesis.spout` configuration with timings fast enough for tests. */
export function spoutConf(
  services: Pick<Services, 'zk' | 'kinesis'>,
  streamName: string,
  applicationName: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    streamName,
    applicationName,
    region: services.kinesis.region,
    endpoint: services.kinesis.endpoint,
    initialPosition: 'TRIM_HORIZON',
    zookeeper: { connect: services.zk.connectString, sessionTimeoutMs: 4_000, root: '/it' },
    idlePollIntervalMs: 200,
    checkpointIntervalMs: 200,
    rebalanceIntervalMs: 300,
    handoffTimeoutMs: 1_000,
    ...overrides,
  };
}

/** Servers started once for the test file, stopped after its last test; `cleanUp` after each test. */
export function servicesForFile(
  cleanUp: () => Promise<void>,
  startKinesis?: () => Promise<KinesisServer>,
): () => Services {
  let services: Services | undefined;
  beforeAll(async () => {
    services = await startServices(startKinesis);
  });
  afterEach(cleanUp);
  afterAll(async () => {
    await services?.stop();
  });
  return () => {
    if (!services) throw new Error('the servers start with the first test');
    return services;
  };
}

/**
 * The hooks a test file of spout processes needs: servers started once for the file (`services`, set
 * once its tests run) and every process `spout` started stopped after each test.
 */
export function spoutSuite(startKinesis?: () => Promise<KinesisServer>) {
  const drivers: StormDriver[] = [];
  const services = servicesForFile(async () => {
    await Promise.all(drivers.splice(0).map((d) => d.stop(2_000)));
  }, startKinesis);
  const suite = {
    get services(): Services {
      return services();
    },
    async spout(
      streamName: string,
      applicationName: string,
      overrides: Record<string, unknown> = {},
      options: Partial<DriverOptions> = {},
    ): Promise<StormDriver> {
      const driver = await startSpout(suite.services, streamName, applicationName, overrides, options);
      drivers.push(driver);
      return driver;
    },
  };
  return suite;
}

export async function startSpout(
  services: Services,
  streamName: string,
  applicationName: string,
  overrides: Record<string, unknown> = {},
  options: Partial<DriverOptions> = {},
): Promise<StormDriver> {
  return StormDriver.start({
    ...options,
    conf: { 'kinesis.spout': spoutConf(services, streamName, applicationName, overrides), ...options.conf },
  });
}

export function stateBase(streamName: string, applicationName: string): string {
  return `/it/${applicationName}/${streamName}`;
}

export async function readJson(zk: ZkSession, path: string): Promise<Record<string, unknown> | undefined> {
  const node = await zk.getData(path);
  return node && (JSON.parse(node.data.toString('utf8')) as Record<string, unknown>);
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Pumps several spout processes side by side, as several Storm tasks would, acking each emit. */
export async function pumpAll(
  drivers: StormDriver[],
  done: () => boolean,
  timeoutMs = 60_000,
  onEmit?: (driver: StormDriver, emit: Emit) => Promise<unknown> | undefined,
): Promise<void> {
  const results = await Promise.all(
    drivers.map((d) => d.pump(done, { timeoutMs, onEmit: onEmit && ((e) => onEmit(d, e)) })),
  );
  if (!results.every(Boolean))
    throw new Error(`pumping timed out\n${drivers.map((d) => `--- spout ${d.pid}\n${d.logText()}`).join('\n')}`);
}

export const idsOf = (emits: Emit[]) => emits.map((e) => e.id);

/**
 * The id of the last transaction ZooKeeper applied (`srvr`): every write, by anyone, moves it by one, so
 * two readings bound how many writes were made between them.
 */
export function zooKeeperZxid(zk: ZooKeeperServer): Promise<number> {
  return new Promise((resolve, reject) => {
    let reply = '';
    const socket = connect(zk.port, '127.0.0.1', () => socket.end('srvr'));
    socket.setTimeout(2_000, () => socket.destroy(new Error('srvr timed out')));
    socket.on('data', (chunk) => (reply += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const zxid = /Zxid: (0x[0-9a-f]+)/i.exec(reply);
      if (zxid) resolve(Number(BigInt(zxid[1]) & 0xffffffffn));
      else reject(new Error(`no Zxid in srvr reply: ${reply}`));
    });
  });
}

/** ZooKeeper session ids (hex) of the members registered under `base` (a member id ends with its session id). */
export async function memberSessions(zk: ZkSession, base: string): Promise<string[]> {
  const members = await zk.getChildren(`${base}/members`);
  return members.map((m) => m.slice(m.lastIndexOf('-') + 1)).sort();
}
