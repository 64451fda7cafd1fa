/**
 * Back-pressure reaches the server: the fan-out reader on the real HTTP/2 client (fanOutClient.ts) and the
 * SDK's event-stream parser, against a loopback HTTP/2 server that pushes a long subscription as fast as
 * it may. While the reader has no room it does not read the event stream, so Node stops granting the
 * stream flow-control window and the server can send little more than one window (64 KiB) however much it
 * has queued; with room again every event arrives, in order, and the renewal starts after the last one.
 */
import { EventStreamCodec } from '@smithy/core/event-streams';
import { createServer, type Http2Server, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { realScheduler } from '../../src/core/scheduler';
import { createFanOutClient } from '../../src/kinesis/fanOutClient';
import { FanOutReader } from '../../src/kinesis/fanOutReader';
import type { ShardReaderEvents } from '../../src/kinesis/reader';

const EVENTS = 2_000;
const DATA = Buffer.alloc(1_000, 'a').toString('base64');
const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => new Uint8Array(Buffer.from(text, 'utf8')),
);

function frame(body: object): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'event' },
      ':event-type': { type: 'string', value: 'SubscribeToShardEvent' },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: new TextEncoder().encode(JSON.stringify(body)),
  });
}

const record = (seq: number) => ({
  SequenceNumber: String(seq),
  PartitionKey: 'k',
  Data: DATA,
  ApproximateArrivalTimestamp: 1_700_000_000,
});

interface Served {
  server: Http2Server;
  port: number;
  sessions: ServerHttp2Session[];
  starts: unknown[];
  /** Bytes the server's sockets have handed to the kernel. */
  bytesSent(): number;
}

/** First subscription: EVENTS events at once, then its end; the second: the shard's final event. */
async function serve(): Promise<Served> {
  const server = createServer();
  const sessions: ServerHttp2Session[] = [];
  const starts: unknown[] = [];
  server.on('session', (session) => sessions.push(session));
  server.on('stream', (stream) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      starts.push(request.StartingPosition);
      stream.respond({ ':status': 200, 'content-type': 'application/vnd.amazon.eventstream' });
      if (starts.length === 1) {
        for (let seq = 1; seq <= EVENTS; seq += 1)
          stream.write(
            frame({ Records: [record(seq)], ContinuationSequenceNumber: String(seq), MillisBehindLatest: 0 }),
          );
      } else {
        stream.write(
          frame({
            Records: [],
            MillisBehindLatest: 0,
            ChildShards: [
              { ShardId: 'child', ParentShards: ['s'], HashKeyRange: { StartingHashKey: '0', EndingHashKey: '1' } },
            ],
          }),
        );
      }
      stream.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    sessions,
    starts,
    bytesSent: () => sessions.reduce((n, s) => n + (s.socket?.bytesWritten ?? 0), 0),
  };
}

const until = async (what: () => boolean) => {
  while (!what()) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('fan-out back-pressure', () => {
  let served: Served;
  beforeAll(async () => {
    process.env.AWS_ACCESS_KEY_ID ??= 'test';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
    served = await serve();
  });
  afterAll(async () => {
    for (const session of served.sessions) session.destroy();
    await new Promise((resolve) => served.server.close(resolve));
  });

  it('stops the server at one flow-control window while the reader has no room, and loses nothing', async () => {
    const kinesis = createFanOutClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${served.port}` });
    const delivered: string[] = [];
    const ends: string[][] = [];
    let open = false;
    const events: ShardReaderEvents = {
      records: (records) => delivered.push(...records.map((r) => r.sequenceNumber)),
      end: (children) => ends.push(children.map((c) => c.shardId)),
      notFound: async () => undefined,
      error: (err) => {
        throw err;
      },
      room: () => {
        throw new Error('a fan-out reader reserves nothing: it asks hasRoom()');
      },
      hasRoom: () => open || delivered.length < 3,
      requested: () => undefined,
      log: () => undefined,
    };
    const consumer = {
      arn: async () => 'arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1',
      forget: () => undefined,
    };
    const reader = new FanOutReader(
      { kinesis, scheduler: realScheduler, stream: { streamName: 's' }, consumer },
      's',
      events,
    );
    reader.start({ kind: 'TRIM_HORIZON' });
    try {
      await until(() => delivered.length >= 3 && served.bytesSent() >= 60_000);
      // Given time to send all it queued (2 MB), the server sends no more than the window (and a bit).
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const total =
        EVENTS * frame({ Records: [record(1)], ContinuationSequenceNumber: '1', MillisBehindLatest: 0 }).length;
      expect(served.bytesSent()).toBeLessThan(200_000);
      expect(total).toBeGreaterThan(2_000_000);
      expect(delivered.length).toBeLessThan(100);
      open = true;
      await until(() => ends.length > 0);
      expect(delivered).toEqual(Array.from({ length: EVENTS }, (_, i) => String(i + 1)));
      expect(served.starts).toEqual([
        { Type: 'TRIM_HORIZON' },
        { Type: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: String(EVENTS) },
      ]);
      expect(ends).toEqual([['child']]);
    } finally {
      await reader.stop();
      kinesis.destroy();
    }
  });
});

/** Every subscription: `events` events of one record, then the shard's end; each session and stream counted. */
async function serveShards(events: number, maxConcurrentStreams?: number) {
  const server = createServer(maxConcurrentStreams ? { settings: { maxConcurrentStreams } } : {});
  const sessions: ServerHttp2Session[] = [];
  server.on('session', (session) => sessions.push(session));
  server.on('stream', (stream) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const { ShardId } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      stream.respond({ ':status': 200, 'content-type': 'application/vnd.amazon.eventstream' });
      for (let seq = 1; seq <= events; seq += 1)
        stream.write(frame({ Records: [record(seq)], ContinuationSequenceNumber: String(seq), MillisBehindLatest: 0 }));
      stream.end(
        frame({
          Records: [],
          MillisBehindLatest: 0,
          ChildShards: [
            {
              ShardId: `${ShardId}-child`,
              ParentShards: [ShardId],
              HashKeyRange: { StartingHashKey: '0', EndingHashKey: '1' },
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, sessions, port: (server.address() as AddressInfo).port };
}

/** Subscriptions to `shards` through one client, each read to its end; the server's sessions after. */
async function readShards(served: Awaited<ReturnType<typeof serveShards>>, shards: string[]) {
  const kinesis = createFanOutClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${served.port}` });
  const consumer = {
    arn: async () => 'arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1',
    forget: () => undefined,
  };
  const ended = new Set<string>();
  const opened = new Set<string>();
  const readers = shards.map((shardId) => {
    const events: ShardReaderEvents = {
      records: () => opened.add(shardId),
      end: () => ended.add(shardId),
      notFound: async () => undefined,
      error: (err) => {
        throw err;
      },
      room: () => 0,
      // Read the first event only: every subscription stays open, held by flow control.
      hasRoom: () => !opened.has(shardId),
      requested: () => undefined,
      log: () => undefined,
    };
    return new FanOutReader(
      { kinesis, scheduler: realScheduler, stream: { streamName: 's' }, consumer },
      shardId,
      events,
    );
  });
  for (const reader of readers) reader.start({ kind: 'TRIM_HORIZON' });
  const deadline = Date.now() + 10_000;
  await until(() => opened.size === shards.length || Date.now() > deadline);
  const sessions = served.sessions.filter((session) => !session.destroyed).length;
  await Promise.all(readers.map((r) => r.stop()));
  kinesis.destroy();
  return { opened: opened.size, sessions };
}

describe('fan-out subscriptions on shared connections', () => {
  it('carries many subscriptions on one connection, and one held back by its caps does not stop the others', async () => {
    process.env.AWS_ACCESS_KEY_ID ??= 'test';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
    // 500 events of ~1.4 KB: each shard's subscription is ten times HTTP/2's default connection window.
    const served = await serveShards(500);
    const kinesis = createFanOutClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${served.port}` });
    const consumer = {
      arn: async () => 'arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1',
      forget: () => undefined,
    };
    const shards = ['held', ...Array.from({ length: 8 }, (_, i) => `free-${i}`)];
    const delivered = new Map(shards.map((s) => [s, 0]));
    const ended = new Set<string>();
    const readers = shards.map((shardId) => {
      const events: ShardReaderEvents = {
        records: (records) => delivered.set(shardId, delivered.get(shardId)! + records.length),
        end: () => ended.add(shardId),
        notFound: async () => undefined,
        error: (err) => {
          throw err;
        },
        room: () => 0,
        // The held shard's caps are full after its first few records: its subscription is not read on.
        hasRoom: () => shardId !== 'held' || delivered.get(shardId)! < 3,
        requested: () => undefined,
        log: () => undefined,
      };
      // The held shard subscribes first: the others' streams follow it on its connection.
      return new FanOutReader(
        { kinesis, scheduler: realScheduler, stream: { streamName: 's' }, consumer },
        shardId,
        events,
      );
    });
    readers[0].start({ kind: 'TRIM_HORIZON' });
    try {
      await until(() => delivered.get('held')! >= 3);
      for (const reader of readers.slice(1)) reader.start({ kind: 'TRIM_HORIZON' });
      const deadline = Date.now() + 10_000;
      await until(() => ended.size === shards.length - 1 || Date.now() > deadline);
      expect([...ended].sort()).toEqual(shards.slice(1).sort());
      for (const shardId of shards.slice(1)) expect(delivered.get(shardId)).toBe(500);
      expect(ended.has('held')).toBe(false);
      // One connection for all nine subscriptions (the SDK's own handler opens one per subscription).
      expect(served.sessions).toHaveLength(1);
    } finally {
      await Promise.all(readers.map((r) => r.stop()));
      kinesis.destroy();
      for (const session of served.sessions) session.destroy();
      await new Promise((resolve) => served.server.close(resolve));
    }
  });

  it('opens no more streams on a connection than its server advertises: more connections instead, none left waiting', async () => {
    process.env.AWS_ACCESS_KEY_ID ??= 'test';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
    // A server that allows 4 streams a connection: 10 subscriptions open at once need 3 connections.
    const served = await serveShards(50, 4);
    try {
      const shards = Array.from({ length: 10 }, (_, i) => `s-${i}`);
      const { opened, sessions } = await readShards(served, shards);
      expect(opened).toBe(10);
      expect(sessions).toBe(3);
    } finally {
      for (const session of served.sessions) session.destroy();
      await new Promise((resolve) => served.server.close(resolve));
    }
  });
});
