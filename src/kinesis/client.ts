/**
 * The Kinesis client: HTTP/1.1 keep-alive (emulators break on HTTP/2), default credential chain, optional role.
 * Every client of the process shares one request handler, so one pool of sockets whatever the shards held:
 * a socket is opened only while requests overlap, and at most a few idle ones are kept. The lean GetRecords
 * path has one pool of its own for the process (sharedRawPool), of at most as many sockets.
 */
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { RetryStrategyV2 } from '@smithy/types';
import { isThrottling } from './errors';
import { readGetRecordsFast } from './fastGetRecords';
import { readGetRecordsLean } from './leanGetRecords';
import { RawHttpPool } from './rawHttp';

/** The one call the spout makes on the client: a fake stands in for it in the simulation. */
export type KinesisApi = Pick<KinesisClient, 'send'>;

/** Where the stream is and who reads it (the configuration's keys of the same names). */
export interface KinesisClientOptions {
  region: string;
  endpoint?: string;
  assumeRoleArn?: string;
  /** GetRecords answers read by fastGetRecords.ts instead of the SDK's deserializer (default true). */
  fastGetRecords?: boolean;
  /**
   * GetRecords signed and sent by leanGetRecords.ts, outside the SDK's middleware (default true; it reads
   * answers with the fast parser, so `fastGetRecords: false` turns it off too).
   */
  leanGetRecords?: boolean;
}

/**
 * Requests open at once: a GetRecords answers at once (it does not wait for records), so even 500 shards
 * polled 5 times a second rarely overlap this many; more wait their turn for a few milliseconds.
 */
export const MAX_SOCKETS = 16;
/** Sockets a process may open to Kinesis: the SDK's agents (every other call) and the lean path's pool (GetRecords). */
export const MAX_PROCESS_SOCKETS = 2 * MAX_SOCKETS;
/** Idle keep-alive sockets kept for the next request (most recently used first, so the rest time out). */
export const MAX_FREE_SOCKETS = 4;
const AGENT_OPTIONS = {
  keepAlive: true,
  maxSockets: MAX_SOCKETS,
  maxFreeSockets: MAX_FREE_SOCKETS,
  scheduling: 'lifo',
  timeout: 30_000,
} as const;

const CONNECTION_TIMEOUT_MS = 5_000;

let shared: NodeHttpHandler | undefined;
let agents: { http: HttpAgent; https: HttpsAgent } | undefined;
let rawPool: RawHttpPool | undefined;

/**
 * The lean GetRecords path's connections (rawHttp.ts), apart from the agents: as many as the agents open,
 * and all of them kept while used (closed after the agents' idle timeout): polling 256 shards, a pool keeping
 * only 4 idle opened a new connection every 3 to 16 calls (bench/getRecordsCost.ts, `connectsPerCall`).
 */
export function sharedRawPool(): RawHttpPool {
  rawPool ??= new RawHttpPool({
    maxSockets: MAX_SOCKETS,
    maxFreeSockets: MAX_SOCKETS,
    idleTimeoutMs: AGENT_OPTIONS.timeout,
    connectionTimeoutMs: CONNECTION_TIMEOUT_MS,
  });
  return rawPool;
}

/** The process's one HTTP and one HTTPS agent: the request handler's. */
export function sharedAgents(): { http: HttpAgent; https: HttpsAgent } {
  agents ??= { http: new HttpAgent(AGENT_OPTIONS), https: new HttpsAgent(AGENT_OPTIONS) };
  return agents;
}

/** The process's one request handler (and so its one HTTP and one HTTPS agent). */
export function sharedRequestHandler(): NodeHttpHandler {
  shared ??= new NodeHttpHandler({
    httpAgent: sharedAgents().http,
    httpsAgent: sharedAgents().https,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    requestTimeout: 30_000,
  });
  return shared;
}

/** Marks a throttled GetRecords attempt: its reader's own back-off (readRate.ts) decides when to call again. */
const OWN_BACKOFF = Symbol('kinesis-spout.ownBackoff');

/**
 * The SDK retries a throttled call itself, at once and outside any budget; a GetRecords must not be: its
 * reader counts every call against `maxGetRecordsPerSecond` and slows down. Other operations keep the
 * SDK's retries. A middleware inside the retry loop marks the attempt; the retry strategy then gives up.
 */
function leaveThrottledReadsToTheReader(client: KinesisClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (err) {
        if (context.commandName === 'GetRecordsCommand' && isThrottling(err) && err instanceof Object)
          Object.defineProperty(err, OWN_BACKOFF, { value: true });
        throw err;
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'kinesisSpoutOwnReadBackoff' },
  );
  const config = client.config as { retryStrategy: () => Promise<unknown> };
  const strategy = config.retryStrategy;
  config.retryStrategy = async () => {
    const inner = (await strategy()) as RetryStrategyV2;
    if (typeof inner.refreshRetryTokenForRetry !== 'function') return inner;
    return {
      ...inner,
      acquireInitialRetryToken: (scope) => inner.acquireInitialRetryToken(scope),
      recordSuccess: (token) => inner.recordSuccess(token),
      refreshRetryTokenForRetry(token, info) {
        if ((info.error as { [OWN_BACKOFF]?: boolean } | undefined)?.[OWN_BACKOFF]) return Promise.reject(info.error);
        return inner.refreshRetryTokenForRetry(token, info);
      },
    } satisfies RetryStrategyV2;
  };
}

/** The default credential chain, or a role assumed on top of it (`assumeRoleArn`): for every client of the process. */
export function credentialsOf(config: KinesisClientOptions): ReturnType<typeof fromTemporaryCredentials> | undefined {
  return config.assumeRoleArn
    ? fromTemporaryCredentials({
        params: { RoleArn: config.assumeRoleArn, RoleSessionName: 'kinesis-shell-spout' },
        clientConfig: { region: config.region },
      })
    : undefined;
}

export function createKinesisClient(config: KinesisClientOptions): KinesisClient {
  const client = new KinesisClient({
    region: config.region,
    endpoint: config.endpoint,
    maxAttempts: 3,
    requestHandler: sharedRequestHandler(),
    credentials: credentialsOf(config),
  });
  leaveThrottledReadsToTheReader(client);
  if (config.fastGetRecords !== false) readGetRecordsFast(client);
  if (config.fastGetRecords !== false && config.leanGetRecords !== false)
    readGetRecordsLean(client, { pool: sharedRawPool() });
  return client;
}
