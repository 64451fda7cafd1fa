/**
 * The client enhanced fan-out subscribes with: HTTP/2 (SubscribeToShard exists only there), one session per
 * subscription as the SDK makes them for event streams. The polling client (client.ts) stays on HTTP/1.1.
 */
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { NodeHttp2Handler } from '@smithy/node-http-handler';
import { credentialsOf, type KinesisClientOptions } from './client';

export function createFanOutClient(config: KinesisClientOptions): KinesisClient {
  return new KinesisClient({
    region: config.region,
    endpoint: config.endpoint,
    // The reader retries itself, from the last event: the SDK's retries would only hide throttling.
    maxAttempts: 1,
    // No request timeout: a subscription is quiet while the caps stop its reading (flow control).
    requestHandler: new NodeHttp2Handler({ sessionTimeout: undefined }),
    credentials: credentialsOf(config),
  });
}
