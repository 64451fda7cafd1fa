/**
 * Bounded memory under enhanced fan-out: a bolt that never acks while the fan-out front keeps offering
 * 2 MB/s of a 40 MB backlog. The spout holds no more than its cap, stops reading the HTTP/2 stream, and
 * flow control stops the server: what the server sent stays near what the cap holds, resident memory flat.
 * kinesalite, because kinesis-local takes minutes to hold this much.
 */
import { createStream, putRecords, type PutResult } from '../helpers/kinesisAdmin';
import { startKinesalite } from '../helpers/kinesisServer';
import { spoutSuite, uniqueName } from '../helpers/fixture';
import { type FanOutServer, startFanOutServer } from '../helpers/fanOutServer';

const suite = spoutSuite(startKinesalite);
let front: FanOutServer;
beforeAll(async () => {
  front = await startFanOutServer(suite.services.kinesis.endpoint, { activationMs: 200 });
});
afterAll(async () => {
  await front?.close();
});

const PAYLOAD = 'x'.repeat(2_048);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function putMany(stream: string, n: number, lanes = 8): Promise<PutResult[]> {
  const records = Array.from({ length: n }, (_, i) => ({ partitionKey: `k${i % 64}`, data: `${i}-${PAYLOAD}` }));
  const size = Math.ceil(n / lanes);
  const parts = await Promise.all(
    Array.from({ length: lanes }, (_, i) =>
      putRecords(suite.services.client, stream, records.slice(i * size, (i + 1) * size)),
    ),
  );
  return parts.flat();
}

test('a bolt stalled under fan-out: records held under the cap, the server held back, resident memory flat', async () => {
  const CAP = 2_000;
  const RUN_MS = 15_000;
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  await putMany(stream, 20_000);
  const driver = await suite.spout(
    stream,
    uniqueName('app'),
    { endpoint: front.endpoint, readMode: 'fanOut', maxRecordsInMemory: CAP, statsIntervalMs: 200 },
    { keepHistory: false },
  );
  const started = Date.now();
  let emitted = 0;
  await driver.pump(() => Date.now() - started > RUN_MS, {
    timeoutMs: RUN_MS + 20_000,
    onEmit: () => {
      emitted += 1;
      return undefined;
    },
  });
  const stats = driver.logs
    .filter((l) => l.msg.startsWith('stats: '))
    .map((l) => ({
      at: l.at - started,
      ...Object.fromEntries(
        l.msg
          .slice(7)
          .split(' ')
          .map((kv) => kv.split('='))
          .map(([k, v]) => [k, Number(v)]),
      ),
    })) as { at: number; inMemory: number; rssMiB: number }[];
  const rss = (from: number, to: number) => median(stats.filter((s) => s.at >= from && s.at < to).map((s) => s.rssMiB));
  const subscription = front.subscriptions.find((s) => s.consumerArn.includes(`:stream/${stream}/consumer/`));
  const offered = (2 * 1024 * 1024 * RUN_MS) / 1000;
  const report = `emitted ${emitted}, server sent ${subscription?.bytesPushed} bytes (offered up to ${offered})\n${stats
    .map((s) => `${s.at} ms: inMemory=${s.inMemory} rssMiB=${s.rssMiB}`)
    .join('\n')}\n${driver.logText()}`;
  if (process.env.DEBUG_FLOW) console.log(report.slice(0, 2_000));
  try {
    expect(emitted).toBeGreaterThan(0);
    expect(emitted).toBeLessThanOrEqual(CAP);
    expect(Math.max(...stats.map((s) => s.inMemory))).toBeLessThanOrEqual(CAP);
    // What the cap holds (2,000 records of about 2.8 KB as events) and what the windows and one event of
    // 1,000 records in flight add, far below what 2 MB/s for the run would have pushed.
    expect(subscription).toBeDefined();
    expect(subscription!.bytesPushed).toBeLessThan(offered / 2);
    expect(subscription!.waitingForDrain).toBe(true);
    expect(rss(RUN_MS - 5_000, Infinity) - rss(3_000, 8_000)).toBeLessThan(40);
  } catch (err) {
    (err as Error).message += `\n${report}`;
    throw err;
  }
});
