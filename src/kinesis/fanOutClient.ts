/**
 * The client enhanced fan-out subscribes with: HTTP/2 (SubscribeToShard exists only there). The polling client
 * (client.ts) stays on HTTP/1.1.
 *
 * The SDK's own handler opens a connection of its own for every event stream (one TCP connection, TLS session
 * and HTTP/2 session per subscription, made again at every renewal). A process holding a thousand shards would
 * keep a thousand connections open and open three a second to renew them. Here subscriptions share
 * connections instead, up to `streamsPerConnection` streams each: HTTP/2's own multiplexing, as its servers
 * expect (they advertise how many streams a connection may carry; RFC 9113 recommends no fewer than 100).
 */
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { NodeHttp2Handler } from '@smithy/node-http-handler';
import type { HttpHandlerOptions, HttpResponse } from '@smithy/types';
import type { ClientHttp2Stream } from 'node:http2';
import { credentialsOf, type KinesisClientOptions } from './client';

/** Subscriptions one connection carries at most: the fewest streams RFC 9113 recommends a server allow. */
export const STREAMS_PER_CONNECTION = 100;
export interface FanOutClientOptions {
  /** Subscriptions per connection (default STREAMS_PER_CONNECTION); 1: a connection each, as the SDK's own handler. */
  streamsPerConnection?: number;
}

/** One connection's handler, the streams open on it now, and how many it may carry. */
interface Lane {
  handler: NodeHttp2Handler;
  open: number;
  /** Unknown until its first answer brings the server's SETTINGS: until then it carries one stream. */
  limit: number | undefined;
  /** Resolves when the first request on it is answered or fails. */
  probed: Promise<void>;
  settle: () => void;
}

/**
 * Event streams on shared connections: each lane is one of the SDK's HTTP/2 handlers told that a request is
 * not an event stream (so that it leases its pooled connection instead of opening one of its own), and is
 * given at most `perConnection` streams at once, and never more than its server advertises
 * (SETTINGS_MAX_CONCURRENT_STREAMS: a stream past it would wait, unanswered, for another to close; a
 * subscription lasts minutes). A new lane carries one stream until its first answer tells that number; the
 * requests meanwhile wait for it (one round trip), then fill it, then the next lane.
 * A lane's connection that fails or is told to go away is replaced by its handler at its next request.
 * A subscription held back by its shard's caps (not read: flow control stops its stream) does not hold the
 * others on its connection back: Node gives the connection's window back as data arrives, whoever reads it
 * (test/integration/fanOutFlowControl.test.ts).
 */
export class SharedHttp2Handler {
  readonly metadata = { handlerProtocol: 'h2' };
  private readonly lanes: Lane[] = [];
  private readonly updates: [never, never][] = [];

  constructor(private readonly perConnection: number) {}

  /** The streams open on each connection (lane) made so far: for the benchmark and tests. */
  connections(): number[] {
    return this.lanes.map((lane) => lane.open);
  }

  async handle(
    request: Parameters<NodeHttp2Handler['handle']>[0],
    options: HttpHandlerOptions = {},
  ): Promise<{ response: HttpResponse }> {
    const lane = await this.claimLane();
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      lane.open -= 1;
    };
    try {
      const answer = await lane.handler.handle(request, { ...options, isEventStream: false });
      const stream = answer.response.body as ClientHttp2Stream | undefined;
      const advertised = stream?.session?.remoteSettings?.maxConcurrentStreams;
      lane.limit = Math.max(1, Math.min(this.perConnection, advertised ?? this.perConnection));
      if (stream && typeof stream.once === 'function') {
        if (stream.closed || stream.destroyed) close();
        else stream.once('close', close);
      } else close();
      return answer;
    } catch (err) {
      close();
      throw err;
    } finally {
      const settle = lane.settle;
      // A probe that failed: the next request on the lane probes again, and the others wait for that one.
      if (lane.limit === undefined) this.arm(lane);
      settle();
    }
  }

  /** What the SDK sets on its handler, set on every lane's, the later ones too. */
  updateHttpClientConfig(key: never, value: never): void {
    this.updates.push([key, value]);
    for (const lane of this.lanes) lane.handler.updateHttpClientConfig(key, value);
  }

  httpHandlerConfigs(): ReturnType<NodeHttp2Handler['httpHandlerConfigs']> {
    return this.lanes[0]?.handler.httpHandlerConfigs() ?? {};
  }

  destroy(): void {
    for (const lane of this.lanes) lane.handler.destroy();
    this.lanes.length = 0;
  }

  /** A lane with room, its stream counted on it at once (before any other request can look). */
  private async claimLane(): Promise<Lane> {
    for (;;) {
      const lane =
        this.lanes.find((l) => l.limit !== undefined && l.open < l.limit) ??
        this.lanes.find((l) => l.limit === undefined && l.open === 0) ??
        (this.lanes.some((l) => l.limit === undefined) ? undefined : this.newLane());
      if (lane) {
        lane.open += 1;
        return lane;
      }
      await this.lanes.find((l) => l.limit === undefined)?.probed;
    }
  }

  private newLane(): Lane {
    // No request timeout: a subscription is quiet while the caps stop its reading (flow control).
    const handler = new NodeHttp2Handler({ sessionTimeout: undefined });
    for (const [key, value] of this.updates) handler.updateHttpClientConfig(key, value);
    const lane: Lane = { handler, open: 0, limit: undefined, probed: Promise.resolve(), settle: () => undefined };
    this.arm(lane);
    this.lanes.push(lane);
    return lane;
  }

  /** A new `probed` for the lane's next first answer. */
  private arm(lane: Lane): void {
    lane.probed = new Promise<void>((resolve) => {
      lane.settle = resolve;
    });
  }
}

export function createFanOutClient(config: KinesisClientOptions, options: FanOutClientOptions = {}): KinesisClient {
  const perConnection = options.streamsPerConnection ?? STREAMS_PER_CONNECTION;
  return new KinesisClient({
    region: config.region,
    endpoint: config.endpoint,
    // The reader retries itself, from the last event: the SDK's retries would only hide throttling.
    maxAttempts: 1,
    // No request timeout: a subscription is quiet while the caps stop its reading (flow control).
    requestHandler:
      perConnection === 1 ? new NodeHttp2Handler({ sessionTimeout: undefined }) : new SharedHttp2Handler(perConnection),
    credentials: credentialsOf(config),
  });
}
