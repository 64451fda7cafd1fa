/**
 * GetRecords answers replayed through two clients, the SDK alone and the SDK with the fast path
 * (src/kinesis/fastGetRecords.ts): both must give the same output, or the same error.
 */
import { GetRecordsCommand, KinesisClient } from '@aws-sdk/client-kinesis';
import { Readable } from 'node:stream';
import { kinesisProblem } from '../../src/kinesis/errors';
import { readGetRecordsFast } from '../../src/kinesis/fastGetRecords';

export interface Answer {
  status: number;
  body: string | Buffer;
  /** The body stops after its bytes with an error made by this (a connection reset); a new one each time, as a socket's. */
  cutOff?: () => Error;
  headers?: Record<string, string>;
}

function cutOff(bytes: Buffer, err: () => Error): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (sent) this.destroy(err());
      else this.push(bytes);
      sent = true;
    },
  });
}

/** A client whose HTTP exchanges are answered from `answers` in turn (the last one again when they run out). */
export function clientAnswering(answers: Answer[], fast: boolean) {
  const seen = { requests: 0, fast: 0, sdk: 0 };
  const handler = {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle() {
      const answer = answers[Math.min(seen.requests, answers.length - 1)];
      seen.requests += 1;
      const bytes = Buffer.from(answer.body);
      return {
        response: {
          statusCode: answer.status,
          reason: '',
          headers: {
            'content-type': 'application/x-amz-json-1.1',
            'content-length': String(bytes.length),
            'x-amzn-requestid': 'request-1',
            ...answer.headers,
          },
          body: answer.cutOff ? cutOff(bytes, answer.cutOff) : Readable.from([bytes]),
        },
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
  const client = new KinesisClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    maxAttempts: 3,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestHandler: handler as never,
  });
  if (fast) readGetRecordsFast(client, (took) => (took ? (seen.fast += 1) : (seen.sdk += 1)));
  return { client, seen };
}

/** The SDK's retry delay is jittered (0 ms at times): left out; `attempts` tells whether it retried. */
function withoutJitter<T>(value: T): T {
  const metadata = (value as { $metadata?: { totalRetryDelay?: number } }).$metadata;
  if (metadata?.totalRetryDelay !== undefined) metadata.totalRetryDelay = 0;
  return value;
}

/** What `send` gave: the output, or the error with everything the rest of the code (and a user) may look at. */
async function outcome(client: KinesisClient): Promise<unknown> {
  try {
    return {
      output: withoutJitter(await client.send(new GetRecordsCommand({ ShardIterator: 'iterator', Limit: 100 }))),
    };
  } catch (err) {
    const e = err as Error & Record<string, unknown>;
    return {
      error: {
        class: e.constructor.name,
        name: e.name,
        message: e.message,
        fields: withoutJitter({ ...e }),
        problem: kinesisProblem(e, 'stream'),
      },
    };
  }
}

/** The same answers through the SDK alone and through the fast path: the same outcome, and what the fast path did. */
export async function bothWays(answers: Answer[]) {
  const sdk = clientAnswering(answers, false);
  const fast = clientAnswering(answers, true);
  const [a, b] = [await outcome(sdk.client), await outcome(fast.client)];
  // Strict: a member present but undefined, or a Buffer for a Uint8Array, is a difference.
  expect(b).toStrictEqual(a);
  expect(fast.seen.requests).toBe(sdk.seen.requests);
  return { sdk: a, fast: b, seen: fast.seen };
}
