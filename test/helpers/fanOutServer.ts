/**
 * An enhanced fan-out front for a kinesis-local: one loopback port that speaks HTTP/2 (cleartext h2c, as
 * the SDK's NodeHttp2Handler does against an `http://` endpoint) and HTTP/1.1, serves the consumer
 * operations and SubscribeToShard itself (see fanOut/), and passes every other operation to kinesis-local
 * unchanged, so one endpoint serves both of the spout's read modes.
 *
 * kinesis-local's own SubscribeToShard is not used: it never sends ChildShards, never ends a subscription
 * at a shard's end, polls once a second, and the SDK fails against it on a GOAWAY.
 *
 * The front reads kinesis-local with GetRecords every `pollIntervalMs` (50 ms by default): that, not the
 * protocol, bounds the put-to-event latency measured through it (AWS documents about 70 ms).
 */
import { createServer as createHttp1Server, type IncomingHttpHeaders } from 'node:http';
import {
  createServer as createHttp2Server,
  type IncomingHttpHeaders as Http2Headers,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Readable } from 'node:stream';
import { type Consumer, ConsumerRegistry, type ConsumerTimings } from './fanOut/consumers';
import { type ActiveFanOutRule, type FanOutFaultRule, FaultRules, type InjectedFanOutFault } from './fanOut/faults';
import { sniffingServer } from './fanOut/sniff';
import type { SubscriptionSettings, SubscriptionStats } from './fanOut/subscription';
import { type SubscribeCall, type SubscribeLimits, Subscriptions } from './fanOut/subscriptions';
import { AMZ_JSON, KinesisError, parseJson, TARGET_PREFIX, upstream } from './fanOut/upstream';

export type { FanOutFault, FanOutFaultRule } from './fanOut/faults';
export type { SubscriptionStats } from './fanOut/subscription';

export interface FanOutSettings extends SubscriptionSettings, SubscribeLimits, ConsumerTimings {
  /**
   * SETTINGS_MAX_CONCURRENT_STREAMS every HTTP/2 connection advertises (read when the server starts): a
   * client's stream past it waits for another to end. 100, the fewest RFC 9113 recommends: AWS does not
   * document the figure its Kinesis endpoints advertise, and a client that follows the advertised one works
   * with any.
   */
  maxConcurrentStreams: number;
}

export const DEFAULT_FAN_OUT_SETTINGS: FanOutSettings = {
  lifetimeMs: 5 * 60_000,
  pollIntervalMs: 50,
  maxBytesPerSecond: 2 * 1024 * 1024,
  recordsPerCall: 1000,
  idleEventMs: 1000,
  shardEnd: 'noContinuation',
  subscribeIntervalMs: 1000,
  subscribeLimitCountsRefused: false,
  inUseWindowMs: 5000,
  activationMs: 500,
  deletionMs: 500,
  maxConsumersPerStream: 20,
  maxConcurrentStreams: 100,
};

export interface FanOutServer {
  /** `http://127.0.0.1:<port>`: the endpoint for both read modes. */
  endpoint: string;
  /** Read when used: a change applies to the next subscription (or consumer). */
  settings: FanOutSettings;
  inject(rule: FanOutFaultRule): ActiveFanOutRule;
  readonly injected: readonly InjectedFanOutFault[];
  /** Requests per operation and protocol: `h1 GetRecords`, `h2 SubscribeToShard`. */
  readonly requests: ReadonlyMap<string, number>;
  /** Every SubscribeToShard call and how it was answered. */
  readonly subscribeCalls: readonly SubscribeCall[];
  /** The subscriptions open now, and every one served. */
  open(): SubscriptionStats[];
  readonly subscriptions: readonly SubscriptionStats[];
  consumers(): Consumer[];
  /** Ends the open subscriptions `which` accepts (default all) as their lifetime would; how many. */
  expire(which?: (s: SubscriptionStats) => boolean): number;
  /** A graceful GOAWAY on every HTTP/2 connection: open streams finish, new requests need a new connection. */
  goAway(): void;
  /** HTTP/2 connections open now. */
  sessions(): number;
  close(): Promise<void>;
}

let requestCounter = 0;

/** `port`: 0 (the default) for a free one; scripts/fanout-local.ts takes a fixed one for the docs' commands. */
export async function startFanOutServer(
  kinesisEndpoint: string,
  overrides: Partial<FanOutSettings> = {},
  port = 0,
): Promise<FanOutServer> {
  const settings: FanOutSettings = { ...DEFAULT_FAN_OUT_SETTINGS, ...overrides };
  const kinesis = upstream(kinesisEndpoint);
  const faults = new FaultRules();
  const registry = new ConsumerRegistry(kinesis, () => settings);
  const subscriptions = new Subscriptions(kinesis, registry, faults, () => settings);
  registry.onDeregister = (consumer) => subscriptions.endConsumer(consumer);
  const requests = new Map<string, number>();
  const sessions = new Set<ServerHttp2Session>();

  /** The operations the front answers itself (apart from SubscribeToShard); undefined: pass it on. */
  const answerOwn = async (operation: string, body: Record<string, unknown>): Promise<unknown> => {
    switch (operation) {
      case 'RegisterStreamConsumer':
        return registry.register(body);
      case 'DescribeStreamConsumer':
        return registry.describe(body);
      case 'ListStreamConsumers':
        return registry.list(body);
      case 'DeregisterStreamConsumer':
        return registry.deregister(body);
      default:
        return undefined;
    }
  };

  /** Answers a request: the front's own, or kinesis-local's (DescribeStreamSummary with the front's consumer count). */
  const answer = async (
    protocol: 'h1' | 'h2',
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    raw: Buffer,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> => {
    const operation = String(headers['x-amz-target'] ?? '').replace(TARGET_PREFIX, '');
    requests.set(`${protocol} ${operation}`, (requests.get(`${protocol} ${operation}`) ?? 0) + 1);
    const body = parseJson(raw);
    const requestId = `fanout-${++requestCounter}`;
    try {
      if (operation === 'SubscribeToShard')
        throw new KinesisError(
          400,
          'InvalidArgumentException',
          'SubscribeToShard needs HTTP/2 (this came over HTTP/1.1)',
        );
      const own = await answerOwn(operation, body);
      if (own !== undefined) return json(200, own, requestId);
    } catch (err) {
      return errorAnswer(err, requestId);
    }
    const passed = await kinesis.forward(method, path, headers, raw);
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(passed.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      out[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    let replyBody = passed.body;
    if (operation === 'DescribeStreamSummary' && passed.status === 200) {
      const summary = parseJson(replyBody) as { StreamDescriptionSummary?: Record<string, unknown> };
      const described = summary.StreamDescriptionSummary;
      if (described) {
        described.ConsumerCount = registry.all().filter((c) => c.streamArn === described.StreamARN).length;
        replyBody = Buffer.from(JSON.stringify(summary));
      }
    }
    out['content-length'] = String(replyBody.length);
    return { status: passed.status, headers: out, body: replyBody };
  };

  const h1 = createHttp1Server((incoming, reply) => {
    void readAll(incoming)
      .then((raw) => answer('h1', incoming.method ?? 'POST', incoming.url ?? '/', incoming.headers, raw))
      .then(
        (a) => {
          reply.writeHead(a.status, a.headers);
          reply.end(a.body);
        },
        (err: Error) => {
          reply.writeHead(502, { 'content-type': 'text/plain' });
          reply.end(`fan-out front could not reach kinesis-local: ${err.message}`);
        },
      );
  });

  const h2 = createHttp2Server({ settings: { maxConcurrentStreams: settings.maxConcurrentStreams } });
  h2.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('error', () => session.destroy());
  });
  h2.on('stream', (stream: ServerHttp2Stream, headers: Http2Headers) => {
    // The call's arrival, for the rate limit: its headers, before its body is read.
    const arrivedAt = performance.now();
    stream.on('error', () => stream.destroy());
    void (async () => {
      const raw = await readAll(stream);
      const operation = String(headers['x-amz-target'] ?? '').replace(TARGET_PREFIX, '');
      if (operation === 'SubscribeToShard') {
        requests.set('h2 SubscribeToShard', (requests.get('h2 SubscribeToShard') ?? 0) + 1);
        const requestId = `fanout-${++requestCounter}`;
        try {
          await subscriptions.subscribe(stream, parseJson(raw), requestId, arrivedAt);
        } catch (err) {
          send(stream, errorAnswer(err, requestId));
        }
        return;
      }
      const plain: IncomingHttpHeaders = { host: String(headers[':authority'] ?? '') };
      for (const [name, value] of Object.entries(headers)) if (!name.startsWith(':')) plain[name] = value;
      send(stream, await answer('h2', String(headers[':method']), String(headers[':path']), plain, raw));
    })().catch((err: Error) =>
      send(stream, { status: 502, headers: { 'content-type': 'text/plain' }, body: Buffer.from(err.message) }),
    );
  });

  const front = await sniffingServer(h2, h1, port);

  return {
    endpoint: `http://127.0.0.1:${front.port}`,
    settings,
    inject: (rule) => faults.add(rule),
    injected: faults.injected,
    requests,
    subscribeCalls: subscriptions.calls,
    open: () => subscriptions.current(),
    subscriptions: subscriptions.all,
    consumers: () => registry.all(),
    expire: (which = () => true) => subscriptions.end(which, 'lifetime'),
    goAway() {
      for (const session of sessions) session.close();
    },
    sessions: () => sessions.size,
    async close() {
      subscriptions.end(() => true, 'serverClosed');
      registry.close();
      for (const session of sessions) session.destroy();
      for (const socket of front.sockets) socket.destroy();
      h1.closeAllConnections();
      await new Promise<void>((resolve) => front.server.close(() => resolve()));
      kinesis.close();
    },
  };
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'content-length',
]);

function json(status: number, body: unknown, requestId: string) {
  const bytes = Buffer.from(JSON.stringify(body));
  return {
    status,
    headers: { 'content-type': AMZ_JSON, 'content-length': String(bytes.length), 'x-amzn-requestid': requestId },
    body: bytes,
  };
}

function errorAnswer(err: unknown, requestId: string) {
  if (err instanceof KinesisError) return json(err.status, { __type: err.type, message: err.message }, requestId);
  return json(500, { __type: 'InternalFailure', message: (err as Error).message }, requestId);
}

function send(stream: ServerHttp2Stream, a: { status: number; headers: Record<string, string>; body: Buffer }): void {
  if (stream.destroyed || stream.headersSent) return;
  stream.respond({ ...a.headers, ':status': a.status, 'content-length': String(a.body.length) });
  stream.end(a.body);
}

function readAll(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}
