/**
 * Bounded memory (invariant 7) under KPL aggregates, against real servers: one user record of each large
 * aggregate fails forever, the others are acked. What the process holds is what it counts (the failing user
 * records), not every aggregate they came in. Measured as the live memory of the spout process after a full
 * collection (heap and ArrayBuffers, sampled by a module preloaded into it): its resident memory cannot tell
 * held bytes from freed ones, since glibc keeps the pages of freed 1 MB buffers (measured: 160 aggregates of
 * 1 MB decoded and all dropped, resident memory stayed 80 MiB above where it started). kinesalite, as in
 * memory.test.ts: it takes 160 MB of puts in seconds. */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutRecordsCommand } from '@aws-sdk/client-kinesis';
import { createStream } from '../helpers/kinesisAdmin';
import { startKinesalite } from '../helpers/kinesisServer';
import { spoutSuite, uniqueName, waitFor } from '../helpers/fixture';
import { kplAggregate } from '../helpers/kpl';
import { SHELL_SPOUT_LAUNCH } from '../helpers/spoutNode';
import type { StormDriver } from '../helpers/stormDriver';

const suite = spoutSuite(startKinesalite);

const AGGREGATES = 160;
const USERS = 10;
const USER_BYTES = 100_000;
/** The user record of each aggregate the topology fails, every time. */
const FAILING = 4;
const CAP_BYTES = 64 * 2 ** 20;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const MiB = 2 ** 20;

/** Preloaded into the spout: every 250 ms, a full collection, then what is still live, as a line in `file`. */
const PROBE = `
const { appendFileSync } = require('node:fs');
setInterval(() => {
  globalThis.gc();
  const m = process.memoryUsage();
  appendFileSync(process.env.MEMORY_PROBE_FILE, JSON.stringify({ at: Date.now(), live: m.heapUsed + m.external, rss: m.rss }) + '\\n');
}, 250).unref();
`;

interface Sample {
  at: number;
  live: number;
  rss: number;
}

function probeSamples(file: string, from = 0, to = Number.POSITIVE_INFINITY): Sample[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Sample)
    .filter((s) => s.at >= from && s.at < to);
}

/** The process's own count of the bytes it holds, from each `stats:` line. */
const countedBytes = (driver: StormDriver) =>
  driver.logs.filter((l) => l.msg.startsWith('stats: ')).map((l) => Number(/bytesInMemory=(\d+)/.exec(l.msg)![1]));

/** Puts the aggregates, a few per call (a call takes at most 5 MiB), several calls at once. */
async function putAggregates(stream: string): Promise<void> {
  const aggregates = Array.from({ length: AGGREGATES }, (_, a) =>
    kplAggregate(
      Array.from({ length: USERS }, (_, i) => ({
        partitionKey: `agg-${a}-user-${i}`,
        data: `${a}:${i}:${String.fromCharCode(97 + (a % 26)).repeat(USER_BYTES)}`,
      })),
    ),
  );
  const calls: (typeof aggregates)[] = [];
  for (let i = 0; i < aggregates.length; i += 4) calls.push(aggregates.slice(i, i + 4));
  for (let lane = 0; lane < calls.length; lane += 4)
    await Promise.all(
      calls.slice(lane, lane + 4).map(async (batch) => {
        const response = await suite.services.client.send(
          new PutRecordsCommand({
            StreamName: stream,
            Records: batch.map((r) => ({
              PartitionKey: r.partitionKey,
              ExplicitHashKey: r.explicitHashKey,
              Data: r.data,
            })),
          }),
        );
        if (response.FailedRecordCount) throw new Error(`${response.FailedRecordCount} aggregates not put`);
      }),
    );
}

test('a failing user record in each of 160 aggregates of 10 x 100 KB: live memory grows by what is counted, not by the aggregates', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  const dir = mkdtempSync(join(tmpdir(), 'spout-memory-'));
  const probe = join(dir, 'probe.js');
  const file = join(dir, 'samples.jsonl');
  writeFileSync(probe, PROBE);
  const driver = await suite.spout(
    stream,
    uniqueName('app'),
    {
      maxBytesInMemory: CAP_BYTES,
      maxRecordsPerRequest: 2,
      statsIntervalMs: 250,
      retry: { maxRetries: -1, initialBackoffMs: 2_000, maxBackoffMs: 5_000 },
    },
    {
      keepHistory: false,
      nodeOptions: [...SHELL_SPOUT_LAUNCH.nodeOptions, '--expose-gc', '--require', probe],
      env: { MEMORY_PROBE_FILE: file },
    },
  );
  // Live memory of the process before it holds any record.
  await waitFor('samples before the puts', () => probeSamples(file).length >= 8 || undefined);
  const baseline = median(
    probeSamples(file)
      .slice(2)
      .map((s) => s.live),
  );
  await putAggregates(stream);

  const acked = new Set<string>();
  const failing = new Set<string>();
  const settled = () => acked.size === AGGREGATES * (USERS - 1) && failing.size === AGGREGATES;
  const read = await driver.pump(settled, {
    timeoutMs: 120_000,
    onEmit: (emit) => {
      const [, index] = (emit.tuple[1] as string).split(':', 2);
      if (Number(index) === FAILING) {
        failing.add(emit.id);
        return driver.fail(emit.id);
      }
      acked.add(emit.id);
      return driver.ack(emit.id);
    },
  });
  // Every failing record is held now, and retried: live memory over the next seconds.
  const from = Date.now();
  const countedFrom = countedBytes(driver).length;
  await driver.pump(() => Date.now() > from + 6_000, { onEmit: (emit) => driver.fail(emit.id) });
  const held = probeSamples(file, from);
  const counted = median(countedBytes(driver).slice(countedFrom)) / MiB;
  const grown = (median(held.map((s) => s.live)) - baseline) / MiB;
  const report = () =>
    `read: ${read}, acked ${acked.size}, failing ${failing.size}; counted ${counted.toFixed(1)} MiB; live ${(baseline / MiB).toFixed(1)} MiB before, then ` +
    `${held.map((s) => `${(s.live / MiB).toFixed(0)} (rss ${(s.rss / MiB).toFixed(0)})`).join(', ')} MiB\n${driver.logText()}`;
  try {
    expect(read).toBe(true);
    expect(held.length).toBeGreaterThan(10);
    // The failing user records are what is counted (about 15 MiB), under the cap.
    expect(counted).toBeGreaterThan((AGGREGATES * USER_BYTES * 0.9) / MiB);
    expect(counted).toBeLessThan(CAP_BYTES / MiB);
    // Live memory grows by about what is counted, with room for the runtime's own (a GetRecords reply in
    // decoding, tuples being written). Holding the aggregates would take it up by more than 150 MiB.
    expect(grown).toBeLessThan(counted + 32);
  } catch (err) {
    (err as Error).message += `\n${report()}`;
    throw err;
  }
});
