// The fan-out bench's server, in its own process so its CPU is not the reader's: HTTP/2 SubscribeToShard
// (AWS's event-stream framing, made by the SDK's own codec) and HTTP/1.1 GetShardIterator/GetRecords,
// both serving EVENTS batches of RECORDS records of PAYLOAD bytes per shard, then the shard's end.
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
const children = [
  { ShardId: 'child', ParentShards: ['parent'], HashKeyRange: { StartingHashKey: '0', EndingHashKey: '1' } },
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
const endFrame = frame({ Records: [], MillisBehindLatest: 0, ChildShards: children });

const h2 = createH2();
h2.on('stream', (stream) => {
  stream.resume();
  stream.on('end', async () => {
    stream.respond({ ':status': 200, 'content-type': 'application/vnd.amazon.eventstream' });
    for (let i = 0; i < EVENTS; i += 1)
      if (!stream.write(batchFrame)) await new Promise((resolve) => stream.once('drain', resolve));
    stream.end(endFrame);
  });
});

const body = (json) => Buffer.from(JSON.stringify(json));
const iterator = (index) => body({ ShardIterator: `it-${index}` });
const batches = Array.from({ length: EVENTS }, (_, i) =>
  body({ Records: records, NextShardIterator: `it-${i + 1}`, MillisBehindLatest: 0 }),
);
const last = body({ Records: [], MillisBehindLatest: 0, ChildShards: children });
const http = createHttp((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    let out;
    if (target.endsWith('GetShardIterator')) out = iterator(0);
    else {
      const index = Number(String(input.ShardIterator).slice(3));
      out = index < EVENTS ? batches[index] : last;
    }
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'content-length': out.length });
    res.end(out);
  });
});
h2.listen(0, '127.0.0.1', () =>
  http.listen(0, '127.0.0.1', () => process.stdout.write(`${h2.address().port} ${http.address().port}\n`)),
);
