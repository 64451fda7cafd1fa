/**
 * An HTTP proxy in front of a Kinesis emulator that answers chosen requests with AWS-shaped JSON errors
 * (throughput exceeded, expired iterator, a transient not-found, 500s) instead of forwarding them, so the
 * spout meets the errors real Kinesis gives and an emulator never does.
 *
 * Kinesis speaks the AWS JSON 1.1 protocol: the operation is in `X-Amz-Target`
 * (`Kinesis_20131202.GetRecords`), the body is JSON. A shard iterator is opaque, so the proxy learns which
 * shard each one reads from the GetShardIterator and GetRecords answers that pass through it.
 */
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { seededRandom } from './seededRandom';

/** Error types and the status Kinesis answers them with. */
export const KinesisFault = {
  Throttled: { status: 400, type: 'ProvisionedThroughputExceededException' },
  ExpiredIterator: { status: 400, type: 'ExpiredIteratorException' },
  NotFound: { status: 400, type: 'ResourceNotFoundException' },
  InternalFailure: { status: 500, type: 'InternalFailure' },
} as const;

export interface KinesisRequest {
  /** The operation, without the service prefix: `GetRecords`. */
  operation: string;
  body: Record<string, unknown>;
  /** The shard the request reads, when the proxy can tell (GetRecords: from iterators it saw handed out). */
  shardId: string | undefined;
}

/**
 * What a rule does to a request it fires on: answer an AWS error instead, pass it on late, or pass it on
 * and change the emulator's successful answer (a listing that no longer shows a shard, as after retention).
 */
export type FaultAnswer =
  | { status: number; type: string; message?: string }
  | { delayMs: number }
  | { rewrite: (answer: Record<string, unknown>) => Record<string, unknown> };

export type FaultRule = FaultMatch & FaultAnswer;

export interface FaultMatch {
  operations: readonly string[];
  /** Only requests this accepts; default all of `operations`. */
  when?: (request: KinesisRequest) => boolean;
  /** Injected at most this many times; default unbounded. Rules with a bound fire before those without. */
  times?: number;
  /** Chance that a matching request fails (drawn from the proxy's seeded source); default 1. */
  probability?: number;
}

export interface InjectedFault {
  operation: string;
  shardId: string | undefined;
  /** The error type answered, or `delayed` or `rewritten`. */
  type: string;
  /** performance.now() when it was answered. */
  at: number;
}

export interface ActiveRule {
  /** Times this rule has fired. */
  readonly injected: number;
  /** Stops this rule (requests pass again). */
  remove(): void;
}

/**
 * Kinesis's read limit per shard, enforced for every caller together: `callsPerSecond` GetRecords and
 * `bytesPerSecond` of records answered, each a token bucket holding one second's worth; past it,
 * ProvisionedThroughputExceededException as Kinesis answers it.
 */
export interface ReadLimits {
  callsPerSecond: number;
  bytesPerSecond: number;
}

/** Kinesis's own: 5 GetRecords calls and 2 MB per second per shard, shared by every application. */
export const KINESIS_READ_LIMITS: ReadLimits = { callsPerSecond: 5, bytesPerSecond: 2 * 1024 * 1024 };

export interface HttpFaultProxy {
  /** `http://127.0.0.1:<port>`: the spout's `endpoint`. */
  endpoint: string;
  /** Rules are tried in the order they were added; the first that fires answers. */
  inject(rule: FaultRule): ActiveRule;
  /** Every fault answered, in order. */
  readonly injected: readonly InjectedFault[];
  /** Requests seen per operation (forwarded or not). */
  readonly requests: ReadonlyMap<string, number>;
  /** The shard an iterator reads, as learned from the answers that passed. */
  shardOfIterator(iterator: string): string | undefined;
  /** GetRecords refused by the read limits, per `<stream>/<shardId>` (also in `injected`). */
  readonly throttled: ReadonlyMap<string, number>;
  /** GetRecords that passed, per `<stream>/<shardId>`. */
  readonly reads: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

interface RuleState {
  rule: FaultRule;
  injected: number;
  removed: boolean;
}

const TARGET_PREFIX = /^Kinesis_\d+\./;
const AMZ_JSON = 'application/x-amz-json-1.1';

function parseJson(bytes: Buffer): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

export async function startHttpFaultProxy(
  upstreamEndpoint: string,
  options: { seed?: number; readLimits?: ReadLimits } = {},
): Promise<HttpFaultProxy> {
  const upstream = new URL(upstreamEndpoint);
  const random = seededRandom(options.seed ?? 1);
  const agent = new Agent({ keepAlive: true });
  const rules: RuleState[] = [];
  const injected: InjectedFault[] = [];
  const requests = new Map<string, number>();
  const iterators = new Map<string, string>();
  /** The stream each iterator reads (by name), for the per-shard limits and Kinesis's message. */
  const streamOfIterator = new Map<string, string>();
  const limiter = options.readLimits && readLimiter(options.readLimits);
  const throttled = new Map<string, number>();
  const reads = new Map<string, number>();
  let requestIds = 0;

  const shardOf = (operation: string, body: Record<string, unknown>): string | undefined => {
    if (typeof body.ShardId === 'string') return body.ShardId;
    if (operation === 'GetRecords' && typeof body.ShardIterator === 'string') return iterators.get(body.ShardIterator);
    return undefined;
  };

  const fires = (request: KinesisRequest, state: RuleState): boolean => {
    const { rule } = state;
    if (state.removed || !rule.operations.includes(request.operation)) return false;
    if (rule.times !== undefined && state.injected >= rule.times) return false;
    if (rule.when && !rule.when(request)) return false;
    return rule.probability === undefined || random() < rule.probability;
  };
  // A burst (a rule with `times`) goes first: a scattered fault that ends a call (a throttled read, an
  // expired iterator) would otherwise split it across calls, and the SDK's retries would absorb the pieces.
  const firing = (request: KinesisRequest): RuleState | undefined =>
    rules.find((state) => state.rule.times !== undefined && fires(request, state)) ??
    rules.find((state) => state.rule.times === undefined && fires(request, state));

  /** Remembers the shard of each iterator handed out, so later GetRecords can be told apart by shard. */
  const learn = (request: KinesisRequest, answer: Record<string, unknown>) => {
    if (!request.shardId) return;
    const next =
      request.operation === 'GetShardIterator'
        ? answer.ShardIterator
        : request.operation === 'GetRecords'
          ? answer.NextShardIterator
          : undefined;
    if (typeof next !== 'string') return;
    iterators.set(next, request.shardId);
    const stream =
      request.operation === 'GetShardIterator'
        ? streamNameOf(request.body)
        : streamOfIterator.get(String(request.body.ShardIterator));
    if (stream) streamOfIterator.set(next, stream);
  };

  const forward = (
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        { host: upstream.hostname, port: upstream.port, method, path, headers, agent },
        (response) => {
          readAll(response).then(
            (answer) => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: answer }),
            reject,
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const server = createServer((incoming, reply) => {
    void (async () => {
      const raw = await readAll(incoming);
      const operation = String(incoming.headers['x-amz-target'] ?? '').replace(TARGET_PREFIX, '');
      const body = parseJson(raw);
      const request: KinesisRequest = { operation, body, shardId: shardOf(operation, body) };
      requests.set(operation, (requests.get(operation) ?? 0) + 1);
      const readKey =
        operation === 'GetRecords' && request.shardId
          ? `${streamOfIterator.get(String(body.ShardIterator)) ?? '?'}/${request.shardId}`
          : undefined;
      if (limiter && readKey && !limiter.admit(readKey, performance.now())) {
        throttled.set(readKey, (throttled.get(readKey) ?? 0) + 1);
        injected.push({
          operation,
          shardId: request.shardId,
          type: KinesisFault.Throttled.type,
          at: performance.now(),
        });
        const [stream, shardId] = [readKey.slice(0, readKey.lastIndexOf('/')), request.shardId];
        requestIds += 1;
        answerAsKinesis(reply, KinesisFault.Throttled.status, requestIds, {
          __type: KinesisFault.Throttled.type,
          message: `Rate exceeded for shard ${shardId} in stream ${stream} under account 000000000000.`,
        });
        return;
      }
      const fault = firing(request);
      if (fault) fault.injected += 1;
      const rule = fault?.rule;
      if (rule && 'rewrite' in rule) {
        injected.push({ operation, shardId: request.shardId, type: 'rewritten', at: performance.now() });
      } else if (rule && 'delayMs' in rule) {
        injected.push({ operation, shardId: request.shardId, type: 'delayed', at: performance.now() });
        await new Promise((resolve) => setTimeout(resolve, rule.delayMs));
      } else if (rule) {
        const { status, type, message } = rule;
        injected.push({ operation, shardId: request.shardId, type, at: performance.now() });
        const payload = JSON.stringify({
          __type: type,
          message: message ?? `injected by the test proxy: ${type} on ${operation}`,
        });
        reply.writeHead(status, {
          'content-type': AMZ_JSON,
          'content-length': Buffer.byteLength(payload),
          'x-amzn-requestid': `fault-${injected.length}`,
        });
        reply.end(payload);
        return;
      }
      const answer = await forward(incoming.method ?? 'POST', incoming.url ?? '/', incoming.headers, raw);
      if (answer.status === 200) {
        const parsed = parseJson(answer.body);
        learn(request, parsed);
        if (limiter && readKey) {
          limiter.answered(readKey, performance.now(), recordBytes(parsed));
          reads.set(readKey, (reads.get(readKey) ?? 0) + 1);
        }
      }
      if (answer.status === 200 && rule && 'rewrite' in rule)
        answer.body = Buffer.from(JSON.stringify(rule.rewrite(parseJson(answer.body))));
      const headers = { ...answer.headers };
      // The body is passed whole: its length is known, however the emulator framed it.
      delete headers['transfer-encoding'];
      headers['content-length'] = String(answer.body.length);
      reply.writeHead(answer.status, headers);
      reply.end(answer.body);
    })().catch((err: Error) => {
      if (reply.headersSent) {
        reply.destroy();
        return;
      }
      reply.writeHead(502, { 'content-type': 'text/plain' });
      reply.end(`proxy could not reach ${upstreamEndpoint}: ${err.message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    inject(rule) {
      const state: RuleState = { rule, injected: 0, removed: false };
      rules.push(state);
      return {
        get injected() {
          return state.injected;
        },
        remove() {
          state.removed = true;
        },
      };
    },
    injected,
    requests,
    shardOfIterator: (iterator) => iterators.get(iterator),
    throttled,
    reads,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

function streamNameOf(body: Record<string, unknown>): string | undefined {
  if (typeof body.StreamName === 'string') return body.StreamName;
  if (typeof body.StreamARN === 'string') return body.StreamARN.slice(body.StreamARN.lastIndexOf('/') + 1);
  return undefined;
}

/** The bytes Kinesis counts against a shard's read limit: each record's data and partition key. */
function recordBytes(answer: Record<string, unknown>): number {
  const records = Array.isArray(answer.Records) ? (answer.Records as { Data?: string; PartitionKey?: string }[]) : [];
  return records.reduce(
    (sum, r) => sum + Buffer.byteLength(r.Data ?? '', 'base64') + Buffer.byteLength(r.PartitionKey ?? ''),
    0,
  );
}

/**
 * A token bucket: `capacity` tokens, refilled at `perSecond`; taking may drive it below zero (a GetRecords
 * answering more bytes than are left), and nothing is admitted until it is positive again.
 */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly capacity: number,
    private readonly perSecond: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.at = now;
  }

  level(now: number): number {
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.at) * this.perSecond) / 1000);
    this.at = now;
    return this.tokens;
  }

  take(now: number, amount = 1): void {
    this.tokens = this.level(now) - amount;
  }
}

/**
 * Each shard's calls and bytes as two token buckets of one second's worth each (Kinesis's limits are per
 * second, with a second's burst): a call is admitted when a call token is left and the bytes are not spent.
 */
function readLimiter(limits: ReadLimits) {
  const shards = new Map<string, { calls: TokenBucket; bytes: TokenBucket }>();
  const of = (key: string, now: number) => {
    let shard = shards.get(key);
    if (!shard) {
      shard = {
        calls: new TokenBucket(limits.callsPerSecond, limits.callsPerSecond, now),
        bytes: new TokenBucket(limits.bytesPerSecond, limits.bytesPerSecond, now),
      };
      shards.set(key, shard);
    }
    return shard;
  };
  return {
    admit(key: string, now: number): boolean {
      const shard = of(key, now);
      if (shard.calls.level(now) < 1 || shard.bytes.level(now) <= 0) return false;
      shard.calls.take(now);
      return true;
    },
    answered(key: string, now: number, answeredBytes: number): void {
      of(key, now).bytes.take(now, answeredBytes);
    },
  };
}

/** An error as Kinesis sends it: 400, AWS JSON 1.1, the type in `__type`, a request id in the headers. */
function answerAsKinesis(
  reply: import('node:http').ServerResponse,
  status: number,
  requestId: number,
  payload: { __type: string; message: string },
): void {
  const body = JSON.stringify(payload);
  reply.writeHead(status, {
    'x-amzn-requestid': `00000000-0000-4000-8000-${String(requestId).padStart(12, '0')}`,
    'x-amz-id-2': Buffer.from(`throttle-${requestId}`).toString('base64'),
    'content-type': AMZ_JSON,
    'content-length': Buffer.byteLength(body),
    date: new Date().toUTCString(),
  });
  reply.end(body);
}
