// The fan-out bench's server, in its own process so its CPU is not the reader's: HTTP/2 SubscribeToShard
// (AWS's event-stream framing, made by the SDK's own codec) and HTTP/1.1 GetShardIterator/GetRecords,
// both serving EVENTS batches of RECORDS records of PAYLOAD bytes per shard, then the shard's end (its child
// naming it as its parent; over HTTP/2 in the reference's form, a continuation beside ChildShards).
// Prints "<h2 port> <http port>" when listening.
import { EventStreamCodec } from '@smithy/core/event-streams';
import { createServer as createHttp } from 'node:http';
import { createServer as createH2 } from 'node:http2';

const [EVENTS, RECORDS, PAYLOAD] = process.argv.slice(2).map(Number);
const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => new Uint8Array(Buffer.from(text, 'utf8')),
);
const data = Buffer.alloc(PAYLOAD, 'x').toString('base64');
const records = Array.from({ length: RECORDS }, (_, i) => ({
  SequenceNumber: `4960000000000000000000000000000000000000000000${String(i).padStart(10, '0')}`,
  PartitionKey: `key-${i}`,
  Data: data,
  ApproximateArrivalTimestamp: 1_700_000_000.123,
}));
/** The shard's one child, naming it as its parent (as the reference has it). */
const children = (shardId) => [
  { ShardId: `${shardId}-child`, ParentShards: [shardId], HashKeyRange: { StartingHashKey: '0', EndingHashKey: '1' } },
];
const header = (value) => ({ type: 'string', value });
const frame = (body) =>
  codec.encode({
    headers: {
      ':message-type': header('event'),
      ':event-type': header('SubscribeToShardEvent'),
      ':content-type': header('application/json'),
    },
    body: new Uint8Array(Buffer.from(JSON.stringify(body))),
  });
const batchFrame = frame({
  Records: records,
  ContinuationSequenceNumber: records.at(-1).SequenceNumber,
  MillisBehindLatest: 0,
});
const endFrame = (shardId) =>
  frame({
    Records: [],
    ContinuationSequenceNumber: records.at(-1).SequenceNumber,
    MillisBehindLatest: 0,
    ChildShards: children(shardId),
  });

const h2 = createH2();
h2.on('stream', (stream) => {
  const chunks = [];
  stream.on('data', (c) => chunks.push(c));
  stream.on('end', async () => {
    const { ShardId } = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    stream.respond({ ':status': 200, 'content-type': 'application/vnd.amazon.eventstream' });
    for (let i = 0; i < EVENTS; i += 1)
      if (!stream.write(batchFrame)) await new Promise((resolve) => stream.once('drain', resolve));
    stream.end(endFrame(ShardId));
  });
});

const body = (json) => Buffer.from(JSON.stringify(json));
// An iterator names its shard and the next batch: `it-<index>-<shardId>`.
const iterator = (index, shardId) => body({ ShardIterator: `it-${index}-${shardId}` });
const batch = (i, shardId) =>
  body({ Records: records, NextShardIterator: `it-${i + 1}-${shardId}`, MillisBehindLatest: 0 });
const last = (shardId) => body({ Records: [], MillisBehindLatest: 0, ChildShards: children(shardId) });
const http = createHttp((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    let out;
    if (target.endsWith('GetShardIterator')) out = iterator(0, input.ShardId);
    else {
      const [, index, shardId] = /^it-(\d+)-(.*)$/.exec(String(input.ShardIterator)) ?? [];
      out = Number(index) < EVENTS ? batch(Number(index), shardId) : last(shardId);
    }
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'content-length': out.length });
    res.end(out);
  });
});
h2.listen(0, '127.0.0.1', () =>
  http.listen(0, '127.0.0.1', () => process.stdout.write(`${h2.address().port} ${http.address().port}\n`)),
);
