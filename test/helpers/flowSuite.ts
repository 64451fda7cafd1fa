/**
 * The hooks a test file of flows needs: real servers started once for the file, and after each test the
 * flow it made stopped and whatever it asked to close (fault proxies) closed.
 *
 * With `readMode: 'fanOut'` the spouts read through enhanced fan-out: a fan-out front (fanOutServer.ts) is
 * started before kinesis-local for the file, the spouts' `endpoint` is the front's (it passes every other
 * operation on), and their configuration says `readMode: "fanOut"`.
 */
import { createStream } from './kinesisAdmin';
import { servicesForFile, uniqueName, type Services } from './fixture';
import { Flow } from './flow';
import { type FanOutServer, type FanOutSettings, startFanOutServer } from './fanOutServer';
import type { KinesisServer } from './kinesisServer';

export type ReadMode = 'polling' | 'fanOut';

/** The read modes the flow suites run in: both, or the one READ_MODE names. */
export function readModes(): ReadMode[] {
  const only = process.env.READ_MODE;
  if (only === undefined || only === '') return ['polling', 'fanOut'];
  if (only !== 'polling' && only !== 'fanOut') throw new Error(`READ_MODE must be polling or fanOut, not ${only}`);
  return [only];
}

/** The form of a shard's last event in the flow suites (FAN_OUT_SHARD_END; the API reference's by default). */
function flowShardEnd(): FanOutSettings['shardEnd'] {
  const form = process.env.FAN_OUT_SHARD_END || 'continuation';
  if (form !== 'continuation' && form !== 'noContinuation')
    throw new Error(`FAN_OUT_SHARD_END must be continuation or noContinuation, not ${form}`);
  return form;
}

/**
 * The front's settings for the flow suites: AWS's limits (1 subscribe/s, 5 s in use), a lifetime of 8 s
 * instead of 5 minutes so that a test of a few seconds sees subscriptions renewed, and shards ending in the
 * reference's form (the continuation beside ChildShards; fanOut.flow.test.ts keeps the front's default, the
 * other form, and fanOut.shardEnd.test.ts runs both).
 */
export const FLOW_FAN_OUT: Partial<FanOutSettings> = { lifetimeMs: 8_000, shardEnd: flowShardEnd() };

export interface FlowSuiteOptions {
  readMode?: ReadMode;
  /** The front's settings (fan-out only). */
  fanOut?: Partial<FanOutSettings>;
  /** The Kinesis emulator for the file (kinesis-local unless told). */
  startKinesis?: () => Promise<KinesisServer>;
}

export function flowSuite(options: FlowSuiteOptions = {}) {
  const readMode = options.readMode ?? 'polling';
  let current: Flow | undefined;
  let front: FanOutServer | undefined;
  const toClose: { close(): Promise<void> }[] = [];
  const services = servicesForFile(async () => {
    await current?.stop();
    current = undefined;
    for (const thing of toClose.splice(0)) await thing.close();
  }, options.startKinesis);
  const frontSettings = { activationMs: 200, ...options.fanOut };
  if (readMode === 'fanOut') {
    // Registered after servicesForFile's, so run after it: kinesis-local is up.
    beforeAll(async () => {
      front = await startFanOutServer(services().kinesis.endpoint, frontSettings);
    });
    afterAll(async () => {
      await front?.close();
    });
  }
  /** What the spouts are pointed at: kinesis-local, or the front before it. */
  const spoutServices = (): Services => {
    const real = services();
    return front ? { ...real, kinesis: { ...real.kinesis, endpoint: front.endpoint } } : real;
  };
  const suite = {
    readMode,
    get services(): Services {
      return services();
    },
    /** The fan-out front (fan-out mode only). */
    get front(): FanOutServer {
      if (!front) throw new Error('no fan-out front: the suite reads by polling');
      return front;
    },
    /** The Kinesis endpoint the spouts are given: kinesis-local's, or the front's. */
    get endpoint(): string {
      return spoutServices().kinesis.endpoint;
    },
    /**
     * The spouts' endpoint through `proxy`, an HTTP/1.1 fault proxy (httpFaultProxy.ts) before kinesis-local:
     * the proxy itself when polling. In fan-out mode a front of its own before the proxy (the proxy speaks no
     * HTTP/2), closed after the test: what the front passes on (ListShards, DescribeStreamSummary) and its own
     * reads of kinesis-local meet the proxy's faults; its settings are the suite front's; faults
     * on subscriptions are injected into the front returned.
     */
    async through(proxy: { endpoint: string }): Promise<{ endpoint: string; front?: FanOutServer }> {
      if (readMode === 'polling') return { endpoint: proxy.endpoint };
      const own = suite.closeAfter(await startFanOutServer(proxy.endpoint, frontSettings));
      return { endpoint: own.endpoint, front: own };
    },
    async newStream(shards: number): Promise<string> {
      const stream = uniqueName('stream');
      await createStream(suite.services.client, stream, shards);
      return stream;
    },
    /** Spout processes on `stream`, stopped after the test. */
    flow(stream: string, overrides: Record<string, unknown> = {}, app = uniqueName('app')): Flow {
      const mode = readMode === 'fanOut' ? { readMode: 'fanOut' } : {};
      current = new Flow(spoutServices(), stream, app, { ...mode, ...overrides });
      return current;
    },
    /** Closed after the test. */
    closeAfter<T extends { close(): Promise<void> }>(thing: T): T {
      toClose.push(thing);
      return thing;
    },
  };
  return suite;
}
