/**
 * The benchmark emulator's HTTP/1.1 front: Kinesis's JSON 1.1 protocol as the AWS SDK v3 speaks it (POST /,
 * `X-Amz-Target: Kinesis_20131202.<Operation>`, errors as status 400 with `{"__type", "message"}`), every
 * answer sent `latencyMs` after its request arrived, requests answered independently of one another.
 * `GET /healthcheck` answers 200 once listening. A request with the UNMETERED header is not held to the quotas. Run as a process of its own: main.ts.
 */
import { randomUUID } from 'node:crypto';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { FastKinesis, type FastKinesisOptions } from './api';
import { KinesisFault } from './stream';

export interface FastKinesisServerOptions extends FastKinesisOptions {
  /** Added to every answer, error or not: a Kinesis call's round trip within a region is about 10–20 ms. */
  latencyMs: number;
}

export const FAST_KINESIS_DEFAULTS: FastKinesisServerOptions = {
  latencyMs: 15,
  transitionMs: 100,
  limits: true,
  shardLimit: 20_000,
};

/** A request with this header set to 1 is neither counted against Kinesis's quotas nor refused by them. */
export const UNMETERED = 'x-fast-kinesis-unmetered';
/** Every request of `client` sent UNMETERED (a benchmark's producer and polling, not what it measures). */
export function markUnmetered<C extends Pick<KinesisClient, 'middlewareStack'>>(client: C): C {
  client.middlewareStack.add(
    (next) => (args) => {
      (args.request as { headers: Record<string, string> }).headers[UNMETERED] = '1';
      return next(args);
    },
    { step: 'build', name: 'fastKinesisUnmetered' },
  );
  return client;
}

const TARGET = /^Kinesis_20131202\.([A-Za-z]+)$/;
const CONTENT_TYPE = 'application/x-amz-json-1.1';

export interface RunningFastKinesis {
  port: number;
  close(): Promise<void>;
}

function answer(reply: ServerResponse, status: number, body: unknown, latencyMs: number, arrived: number): void {
  const bytes = Buffer.from(JSON.stringify(body));
  const send = () => {
    reply.writeHead(status, {
      'content-type': CONTENT_TYPE,
      'content-length': bytes.length,
      'x-amzn-requestid': randomUUID(),
    });
    reply.end(bytes);
  };
  const wait = arrived + latencyMs - performance.now();
  if (wait > 0) setTimeout(send, wait);
  else send();
}

export async function startFastKinesisServer(
  port: number,
  options: FastKinesisServerOptions = FAST_KINESIS_DEFAULTS,
  /** Wall-clock ms (arrival times, iterator and quota windows): a test's own clock in process. */
  clock: () => number = Date.now,
): Promise<RunningFastKinesis> {
  const kinesis = new FastKinesis(options, clock);
  const server: Server = createServer({ keepAliveTimeout: 60_000 }, (request: IncomingMessage, reply) => {
    const arrived = performance.now();
    if (request.method === 'GET' && request.url === '/healthcheck') {
      reply.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const fail = (status: number, type: string, message: string) =>
        answer(reply, status, { __type: type, message }, options.latencyMs, arrived);
      const operation = TARGET.exec(String(request.headers['x-amz-target'] ?? ''))?.[1];
      if (request.method !== 'POST' || operation === undefined)
        return fail(400, 'UnknownOperationException', `no Kinesis_20131202 operation in X-Amz-Target`);
      let input: unknown;
      try {
        const body = Buffer.concat(chunks).toString('utf8');
        input = body === '' ? {} : JSON.parse(body);
      } catch {
        return fail(400, 'SerializationException', 'the body is not JSON');
      }
      if (typeof input !== 'object' || input === null || Array.isArray(input))
        return fail(400, 'SerializationException', 'the body is not a JSON object');
      try {
        const unmetered = request.headers[UNMETERED] === '1';
        answer(
          reply,
          200,
          kinesis.handle(operation, input as Record<string, unknown>, unmetered),
          options.latencyMs,
          arrived,
        );
      } catch (err) {
        if (err instanceof KinesisFault) return fail(400, err.type, err.message);
        process.stderr.write(`${operation}: ${err instanceof Error ? err.stack : String(err)}\n`);
        fail(500, 'InternalFailure', 'the emulator failed; see its log');
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as { port: number }).port,
    async close() {
      kinesis.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
