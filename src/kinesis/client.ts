/** The Kinesis client: HTTP/1.1 keep-alive (emulators break on HTTP/2), default credential chain, optional role. */
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/** The one call the spout makes on the client: a fake stands in for it in the simulation. */
export type KinesisApi = Pick<KinesisClient, 'send'>;

/** Where the stream is and who reads it (the configuration's keys of the same names). */
export interface KinesisClientOptions {
  region: string;
  endpoint?: string;
  assumeRoleArn?: string;
}

export function createKinesisClient(config: KinesisClientOptions): KinesisClient {
  return new KinesisClient({
    region: config.region,
    endpoint: config.endpoint,
    maxAttempts: 3,
    requestHandler: new NodeHttpHandler({
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 64 }),
      connectionTimeout: 5_000,
      requestTimeout: 30_000,
    }),
    credentials: config.assumeRoleArn
      ? fromTemporaryCredentials({
          params: { RoleArn: config.assumeRoleArn, RoleSessionName: 'kinesis-shell-spout' },
          clientConfig: { region: config.region },
        })
      : undefined,
  });
}
