/** The SDK as a fan-out client of the front, for tests: HTTP/2, consumers registered and waited for. */
import {
  DescribeStreamConsumerCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  RegisterStreamConsumerCommand,
  type StartingPosition,
  type SubscribeToShardEvent,
  type SubscribeToShardEventStream,
  SubscribeToShardCommand,
} from '@aws-sdk/client-kinesis';
import { NodeHttp2Handler } from '@smithy/node-http-handler';

/** A Kinesis client over HTTP/2 (the SDK's own NodeHttp2Handler); one attempt, so every error shows. */
export function http2Client(server: { endpoint: string; region: string }): KinesisClient {
  return new KinesisClient({
    endpoint: server.endpoint,
    region: server.region,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestHandler: new NodeHttp2Handler({ sessionTimeout: 60_000 }),
    maxAttempts: 1,
  });
}

export async function streamArn(client: KinesisClient, streamName: string): Promise<string> {
  const summary = await client.send(new DescribeStreamSummaryCommand({ StreamName: streamName }));
  return summary.StreamDescriptionSummary!.StreamARN!;
}

/** Registers a consumer and resolves with its ARN once it is ACTIVE. */
export async function activeConsumer(client: KinesisClient, stream: string, name: string): Promise<string> {
  const registered = await client.send(new RegisterStreamConsumerCommand({ StreamARN: stream, ConsumerName: name }));
  const arn = registered.Consumer!.ConsumerARN!;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const described = await client.send(new DescribeStreamConsumerCommand({ ConsumerARN: arn }));
    if (described.ConsumerDescription?.ConsumerStatus === 'ACTIVE') return arn;
    if (Date.now() > deadline) throw new Error(`consumer ${name} not ACTIVE after 30 s`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function subscribe(
  client: KinesisClient,
  consumerArn: string,
  shardId: string,
  position: StartingPosition,
): Promise<AsyncIterator<SubscribeToShardEventStream>> {
  const answer = await client.send(
    new SubscribeToShardCommand({ ConsumerARN: consumerArn, ShardId: shardId, StartingPosition: position }),
  );
  return answer.EventStream![Symbol.asyncIterator]();
}

export interface Reading {
  events: SubscribeToShardEvent[];
  /** The stream ended without an error. */
  ended: boolean;
  /** What the iteration threw. */
  error?: Error;
}

/** Reads events until `enough` says so, the stream ends, or it throws. */
export async function readEvents(
  events: AsyncIterator<SubscribeToShardEventStream>,
  enough: (read: SubscribeToShardEvent[]) => boolean = () => false,
): Promise<Reading> {
  const read: SubscribeToShardEvent[] = [];
  try {
    while (!enough(read)) {
      const next = await events.next();
      if (next.done) return { events: read, ended: true };
      if (next.value.SubscribeToShardEvent) read.push(next.value.SubscribeToShardEvent);
    }
    return { events: read, ended: false };
  } catch (err) {
    return { events: read, ended: false, error: err as Error };
  }
}

export const dataOf = (events: SubscribeToShardEvent[]): string[] =>
  events.flatMap((e) => (e.Records ?? []).map((r) => Buffer.from(r.Data!).toString('utf8')));

export const recordCount = (events: SubscribeToShardEvent[]): number =>
  events.reduce((n, e) => n + (e.Records?.length ?? 0), 0);
