/**
 * An HTTP proxy in front of the Kinesis emulator that counts each task's calls by `X-Amz-Target`
 * (`Kinesis_20131202.ListShards`) and times each round trip through the emulator. The answers are piped
 * through untouched; only GetShardIterator's request body is read, for the shard it names. One proxy per
 * task, so the counts are that task's.
 */
import { Agent, createServer, request as httpRequest } from 'node:http';

export interface KinesisCall {
  at: number;
  op: string;
  /** GetShardIterator: the shard. */
  shardId?: string;
  rttMs?: number;
}

export interface KinesisCounter {
  endpoint: string;
  readonly calls: KinesisCall[];
  /** Calls per operation made in [from, to). */
  counts(from?: number, to?: number): Record<string, number>;
  close(): Promise<void>;
}

const TARGET_PREFIX = /^Kinesis_\d+\./;

/** Calls per operation in `calls` made in [from, to). */
export function callCounts(calls: readonly KinesisCall[], from = 0, to = Infinity): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of calls) if (c.at >= from && c.at < to) counts[c.op] = (counts[c.op] ?? 0) + 1;
  return counts;
}

export async function startKinesisCounter(upstreamEndpoint: string): Promise<KinesisCounter> {
  const upstream = new URL(upstreamEndpoint);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const calls: KinesisCall[] = [];
  const server = createServer((incoming, reply) => {
    const op = String(incoming.headers['x-amz-target'] ?? '').replace(TARGET_PREFIX, '') || 'other';
    const call: KinesisCall = { at: performance.now(), op };
    calls.push(call);
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      if (op === 'GetShardIterator') {
        try {
          call.shardId = (JSON.parse(body.toString('utf8')) as { ShardId?: string }).ShardId;
        } catch {
          // not JSON: counted, not attributed
        }
      }
      const outgoing = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: incoming.method,
          path: incoming.url,
          headers: incoming.headers,
          agent,
        },
        (answer) => {
          reply.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(reply);
          answer.on('end', () => (call.rttMs = performance.now() - call.at));
        },
      );
      outgoing.on('error', (err) => {
        if (reply.headersSent) reply.destroy();
        else reply.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${err.message}`);
      });
      outgoing.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    calls,
    counts(from = 0, to = Infinity) {
      return callCounts(calls, from, to);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
