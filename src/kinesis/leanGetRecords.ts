/**
 * GetRecords without the SDK's per-call machinery: every shard held is polled about once a second, and a call
 * through the SDK cost ~500 µs of CPU (its middleware stack, its signer deriving the key again, its HTTP
 * handler) where the bytes need a fraction of that. Here a GetRecords is a JSON body signed by sigv4.ts with a
 * cached key, written whole to a keep-alive socket of the process's one raw pool (rawHttp.ts: Node's
 * `http.request` alone cost more than the rest of the call), and its 200 read by fastGetRecords.ts's parser.
 *
 * The SDK stays the reference for everything else, and the lean path only ever gives what the SDK would:
 * - Where to send (endpoint, host, signing region and service) is learned from the SDK's own first GetRecords
 *   of each stream ARN (Kinesis routes a call with a `StreamARN` to the account's own endpoint), and the
 *   credentials, the clock offset and the retry quota are the client's own.
 * - Any answer that is not a 200 in the shape the fast parser reads (an error status, a body it refuses, a
 *   network failure, an abort) is handed to the SDK as the answer to its first attempt of the same command:
 *   the call is not sent again, and the SDK's deserializer, error classes and fields (`name`, `$fault`,
 *   `$metadata`, `$retryable`, `$response`), clock-skew correction and retry strategy (retries of 5xx and the
 *   network up to maxAttempts; none for a throttled GetRecords, client.ts) take it from there, exactly as if
 *   its own handler had received it. So a throttled read counts once against the shard's budget, and a 500 is
 *   retried by the SDK as before, its first attempt being this one.
 */
import { GetRecordsCommand, type GetRecordsCommandOutput, type KinesisClient } from '@aws-sdk/client-kinesis';
import type { AwsCredentialIdentity, RetryStrategyV2 } from '@smithy/types';
import { Readable } from 'node:stream';
import { parseGetRecords } from './fastGetRecords';
import { type RawAnswer, type RawHttpPool, requestText } from './rawHttp';
import { SigV4Signer, type SigningCredentials } from './sigv4';

/** Where the SDK sends a GetRecords, and the scope it signs it in: learned from its own request. */
export interface GetRecordsRoute {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number | undefined;
  /** The `host` header the SDK sent (and signed). */
  host: string;
  path: string;
  region: string;
  service: string;
}

export interface LeanOptions {
  /** The process's one raw connection pool (client.ts): its connect timeout is the shared handler's. */
  pool: RawHttpPool;
  /**
   * Told, per GetRecords, which way it went: `lean` answered here, `handed` sent here and its answer handed
   * to the SDK, `sdk` sent by the SDK (a route not learned yet, a request this path does not make). For tests.
   */
  observe?: (way: 'lean' | 'handed' | 'sdk') => void;
}

const TARGET = 'Kinesis_20131202.GetRecords';
const CONTENT_TYPE = 'application/x-amz-json-1.1';
/** The members of a GetRecords request; a command with any other goes through the SDK. */
const MEMBERS = new Set(['ShardIterator', 'Limit', 'StreamARN']);
/** The SDK's memoized credentials are refreshed this long before they expire (its `EXPIRATION_MS`). */
const REFRESH_BEFORE_MS = 300_000;
/** The SDK leaves the clock offset alone when an answer took longer than this (its `getUpdatedSystemClockOffset`). */
const SKEW_SAMPLE_MAX_MS = 900_000;
/** Marks a command whose first attempt was made here: the SDK reads this answer instead of sending it. */
const ANSWERED = Symbol('kinesis-spout.leanAnswer');

/** What the lean attempt came to, for the SDK to take as its first attempt: an answer, or a transport failure. */
type FirstAttempt = { answer: RawAnswer; used: boolean } | { error: unknown; used: boolean };

type AnsweredInput = GetRecordsCommand['input'] & { [ANSWERED]?: FirstAttempt };

/** The request headers the lean path sends besides the ones signing adds: each one signed. */
export function getRecordsHeaders(route: GetRecordsRoute, body: string): Record<string, string> {
  return {
    'content-type': CONTENT_TYPE,
    'x-amz-target': TARGET,
    'content-length': String(Buffer.byteLength(body)),
    host: route.host,
  };
}

/** The body as the SDK serializes it (its members in the model's order, absent ones left out). */
export function getRecordsBody(input: GetRecordsCommand['input']): string {
  return JSON.stringify({ ShardIterator: input.ShardIterator, Limit: input.Limit, StreamARN: input.StreamARN });
}

/** The route of a request the SDK signed: none when it is not one this path can send the same way. */
export function routeOf(request: unknown): GetRecordsRoute | undefined {
  const r = request as {
    protocol?: string;
    hostname?: string;
    port?: number;
    path?: string;
    query?: Record<string, unknown>;
    headers?: Record<string, string>;
    username?: string;
    password?: string;
  };
  if (r.protocol !== 'http:' && r.protocol !== 'https:') return undefined;
  // A path or query beyond `/` (an endpoint with a path prefix) would need SigV4's path normalization: the SDK keeps those.
  if (r.path !== '/' || (r.query && Object.keys(r.query).length > 0) || r.username || r.password) return undefined;
  const host = r.headers?.host;
  const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(r.headers?.authorization ?? '');
  if (!r.hostname || !host || !scope || !r.headers?.authorization?.startsWith('AWS4-HMAC-SHA256 ')) return undefined;
  return {
    protocol: r.protocol,
    // `[::1]` as the URL writes it; Node's request takes the address alone (as the SDK's handler passes it).
    hostname: r.hostname.startsWith('[') && r.hostname.endsWith(']') ? r.hostname.slice(1, -1) : r.hostname,
    port: r.port,
    host,
    path: r.path,
    region: scope[1],
    service: scope[2],
  };
}

/** One POST on the pool, the whole answer read; rejects as the SDK's handler would on the same failure. */
function post(
  route: GetRecordsRoute,
  headers: Record<string, string>,
  body: string,
  options: LeanOptions,
  signal: AbortSignal | undefined,
): Promise<RawAnswer> {
  return options.pool.request(route, requestText('POST', route.path, headers, body), signal);
}

/** A body whose reading fails with `err`, as the connection's did. */
function failing(err: Error): Readable {
  return new Readable({
    read() {
      this.destroy(err);
    },
  });
}

/** The first attempt, as the SDK's handler would have returned it (or thrown it). */
function handlerResult(first: FirstAttempt): { response: unknown } {
  if ('error' in first) throw first.error;
  const { answer } = first;
  return {
    response: {
      statusCode: answer.statusCode,
      reason: answer.reason,
      headers: answer.headers,
      body: answer.body instanceof Error ? failing(answer.body) : Readable.from([answer.body]),
    },
  };
}

type ClientConfig = {
  credentials: (options?: Record<string, unknown>) => Promise<AwsCredentialIdentity>;
  systemClockOffset: number;
  disableClockSkewCorrection?: () => Promise<boolean>;
  retryStrategy: () => Promise<RetryStrategyV2 | object>;
};

/**
 * Installs the lean path on `client`: `send(GetRecordsCommand)` goes this way once the SDK has shown where
 * a stream's GetRecords go; every other command, and a GetRecords with a callback, is the SDK's.
 */
export function readGetRecordsLean(client: KinesisClient, options: LeanOptions): void {
  const config = client.config as unknown as ClientConfig;
  const signer = new SigV4Signer();
  /** By stream ARN ('' without one). */
  const routes = new Map<string, GetRecordsRoute>();
  let credentials: AwsCredentialIdentity | undefined;
  let skewCorrection: boolean | undefined;
  let retries: {
    strategy: RetryStrategyV2;
    token: Awaited<ReturnType<RetryStrategyV2['acquireInitialRetryToken']>>;
  } | null;

  // Innermost, where the SDK's handler would be called: learn the route from the SDK's signed request, or
  // give the SDK the lean path's answer as its first attempt.
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'GetRecordsCommand') return next(args);
      const input = args.input as AnsweredInput;
      const first = input[ANSWERED];
      if (first && !first.used) {
        first.used = true;
        return handlerResult(first) as Awaited<ReturnType<typeof next>>;
      }
      const result = await next(args);
      const key = input.StreamARN ?? '';
      if (!routes.has(key) && (result.response as { statusCode?: number }).statusCode === 200) {
        const route = routeOf(args.request);
        if (route) routes.set(key, route);
      }
      return result;
    },
    { step: 'deserialize', priority: 'low', name: 'kinesisSpoutLeanGetRecords' },
  );

  const currentCredentials = async (): Promise<AwsCredentialIdentity> => {
    const held = credentials;
    if (held && !(held.expiration && held.expiration.getTime() - Date.now() < REFRESH_BEFORE_MS)) return held;
    // The client's own provider (memoized by the SDK): refreshed by it when they near their expiry.
    credentials = await config.credentials();
    return credentials;
  };

  /** The SDK's retry quota grows with each success it sees: these successes count as the SDK's would. */
  const recordSuccess = async () => {
    if (retries === undefined) {
      retries = null;
      const strategy = (await config.retryStrategy()) as RetryStrategyV2;
      if (typeof strategy.recordSuccess === 'function')
        retries = { strategy, token: await strategy.acquireInitialRetryToken('') };
    }
    retries?.strategy.recordSuccess(retries.token);
  };

  const sdkSend = client.send.bind(client) as (
    command: unknown,
    options?: unknown,
    callback?: unknown,
  ) => Promise<unknown>;

  const lean = async (
    command: GetRecordsCommand,
    route: GetRecordsRoute,
    sendOptions: { abortSignal?: AbortSignal } | undefined,
  ): Promise<GetRecordsCommandOutput> => {
    const input = command.input;
    const creds = await currentCredentials();
    skewCorrection ??= (await config.disableClockSkewCorrection?.()) !== true;
    const body = getRecordsBody(input);
    const signed = signer.sign(
      { method: 'POST', path: route.path, headers: getRecordsHeaders(route, body), body },
      creds as SigningCredentials,
      route.region,
      route.service,
      new Date(Date.now() + (skewCorrection ? config.systemClockOffset : 0)),
    );
    const sentAt = Date.now();
    let first: FirstAttempt;
    try {
      const answer = await post(route, signed.headers, body, options, sendOptions?.abortSignal);
      const fast =
        answer.statusCode === 200 && !(answer.body instanceof Error) ? parseGetRecords(answer.body) : undefined;
      if (fast) {
        const { headers } = answer;
        // As the SDK's signer does with every answer that has a date.
        if (skewCorrection && headers.date && headers.age === undefined && Date.now() - sentAt <= SKEW_SAMPLE_MAX_MS) {
          const serverTime = Date.parse(headers.date);
          if (!Number.isNaN(serverTime)) config.systemClockOffset = serverTime - Date.now();
        }
        await recordSuccess();
        options.observe?.('lean');
        return {
          ...fast,
          $metadata: {
            httpStatusCode: 200,
            requestId: headers['x-amzn-requestid'] ?? headers['x-amzn-request-id'] ?? headers['x-amz-request-id'],
            extendedRequestId: headers['x-amz-id-2'],
            cfId: headers['x-amz-cf-id'],
            attempts: 1,
            totalRetryDelay: 0,
          },
        } as GetRecordsCommandOutput;
      }
      first = { answer, used: false };
    } catch (err) {
      // As thrown, untouched: the SDK's retry strategy classifies it by its code and name.
      first = { error: err, used: false };
    }
    options.observe?.('handed');
    const answered: AnsweredInput = { ...input, [ANSWERED]: first };
    return (await sdkSend(new GetRecordsCommand(answered), sendOptions)) as GetRecordsCommandOutput;
  };

  client.send = ((command: unknown, sendOptions?: unknown, callback?: unknown) => {
    if (command instanceof GetRecordsCommand && callback === undefined && typeof sendOptions !== 'function') {
      const input = command.input;
      const route = routes.get(input.StreamARN ?? '');
      if (route && typeof input.ShardIterator === 'string' && Object.keys(input).every((k) => MEMBERS.has(k)))
        return lean(command, route, sendOptions as { abortSignal?: AbortSignal } | undefined);
      options.observe?.('sdk');
    }
    return sdkSend(command, sendOptions, callback);
  }) as KinesisClient['send'];
}
