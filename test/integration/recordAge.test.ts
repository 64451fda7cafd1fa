/**
 * `maxRecordAgeMs` against a Kinesis emulator whose clock the test sets (the project's fast emulator, run in
 * this process): records put while its clock is an hour behind carry arrival times an hour old, as after a
 * long outage; records put after it is set right are fresh. The spout (its own process, its own clock) must
 * set the old ones aside, emit the fresh ones, and checkpoint past both, so that a restart reads nothing again.
 */
import { FAST_KINESIS_DEFAULTS, startFastKinesisServer } from '../helpers/fastKinesis/server';
import { createStream, putRecords, type PutResult } from '../helpers/kinesisAdmin';
import type { KinesisServer } from '../helpers/kinesisServer';
import { readJson, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import { DEFAULT_FIELDS, type Emit } from '../helpers/stormDriver';

const HOUR = 3_600_000;
const LIMIT_MS = 60_000;
/** How far behind real time the emulator's clock is set. */
let behindMs = 0;

async function kinesisWithASettableClock(): Promise<KinesisServer> {
  const server = await startFastKinesisServer(
    0,
    { ...FAST_KINESIS_DEFAULTS, latencyMs: 5, transitionMs: 50 },
    () => Date.now() - behindMs,
  );
  return {
    endpoint: `http://127.0.0.1:${server.port}`,
    region: 'us-east-1',
    logFile: '(in the test process)',
    pid: process.pid,
    stop: () => server.close(),
  };
}

const suite = spoutSuite(kinesisWithASettableClock);
const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;

/** Puts `count` records arriving `ageMs` ago, by the emulator's clock. */
async function putAged(stream: string, ageMs: number, count: number, label: string): Promise<PutResult[]> {
  behindMs = ageMs;
  try {
    return await putRecords(
      suite.services.client,
      stream,
      Array.from({ length: count }, (_, i) => ({ partitionKey: `key-${i % 8}`, data: `${label} ${i}` })),
    );
  } finally {
    behindMs = 0;
  }
}

/** Every shard's checkpoint is at its last record put. */
async function checkpointsAtTheEnd(stream: string, app: string, put: PutResult[]): Promise<void> {
  const last = new Map<string, string>();
  for (const r of put) last.set(r.shardId, r.sequenceNumber);
  for (const [shardId, sequenceNumber] of last) {
    await waitFor(
      `the checkpoint of ${shardId} at its last record`,
      async () =>
        (
          (await readJson(suite.services.inspector, `${stateBase(stream, app)}/checkpoints/${shardId}`))?.position as
            | { sequenceNumber?: string }
            | undefined
        )?.sequenceNumber === sequenceNumber,
    );
  }
}

/** A second process on the same application reads on from the checkpoints: it must emit nothing at all. */
async function restartEmitsNothing(stream: string, app: string, overrides: Record<string, unknown>, options = {}) {
  const again = await suite.spout(stream, app, overrides, options);
  await waitFor('the restarted process holds its shards', async () => {
    await again.next();
    return again.logs.some((l) => /\bshards=[1-9]/.test(l.msg));
  });
  await again.pump(() => false, { timeoutMs: 2_000 });
  return again;
}

test('records older than maxRecordAgeMs go to the dead-letter stream, once, with reason and age; the fresh ones are emitted; the checkpoint passes both and a restart reads nothing again', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 2);
  const old = await putAged(stream, HOUR, 40, 'old');
  const fresh = await putAged(stream, 0, 40, 'fresh');
  const app = uniqueName('app');
  const overrides = {
    maxRecordAgeMs: LIMIT_MS,
    statsIntervalMs: 200,
    retry: { onExhausted: 'deadLetter', deadLetterStream: 'dead' },
  };
  const letterFields = [...DEFAULT_FIELDS, 'attempts', 'lastFailureTime', 'reason', 'ageMs'];
  const options = { streams: { dead: letterFields } };
  const driver = await suite.spout(stream, app, overrides, options);
  const letters: Emit[] = [];
  const acked = new Set<string>();
  const pumped = await driver.pump(() => letters.length >= old.length && acked.size >= fresh.length, {
    onEmit: async (emit) => {
      if (emit.stream === 'dead') letters.push(emit);
      else {
        acked.add(emit.id);
        await driver.ack(emit.id);
      }
    },
  });
  expect({ pumped, log: pumped ? '' : driver.logText() }).toEqual({ pumped: true, log: '' });
  await checkpointsAtTheEnd(stream, app, [...old, ...fresh]);
  expect(await driver.pump(() => false, { timeoutMs: 1_000 })).toBe(false);

  expect([...acked].sort()).toEqual(fresh.map(idOf).sort());
  expect(driver.emits.filter((e) => e.stream !== 'dead')).toHaveLength(fresh.length);
  expect(letters.map((e) => `${e.tuple[2]}:${e.tuple[3]}`).sort()).toEqual(old.map(idOf).sort());
  for (const letter of letters) {
    expect('id' in letter.frame).toBe(false);
    expect(letter.tuple).toHaveLength(letterFields.length);
    const [, data, , , arrival, attempts, lastFailureTime, reason, ageMs] = letter.tuple as unknown[];
    expect({ data: String(data).split(' ')[0], attempts, lastFailureTime, reason }).toEqual({
      data: 'old',
      attempts: 0,
      lastFailureTime: null,
      reason: 'tooOld',
    });
    expect(ageMs).toBeGreaterThanOrEqual(HOUR - 5_000);
    expect(ageMs).toBeLessThan(HOUR + 60_000);
    expect(Math.abs(Date.now() - (arrival as number) - HOUR)).toBeLessThan(60_000);
  }
  await waitFor('the stats line', () => (driver.lastStats()?.tooOld ?? 0) >= old.length);
  expect(driver.lastStats()).toMatchObject({ tooOld: old.length, deadLettered: old.length, skipped: 0 });
  const summaries = driver.logs.filter((l) => l.msg.includes('older than maxRecordAgeMs=60000 when read'));
  // One line per shard within the minute: its first record at once (the rest go in its next line, a minute on).
  expect(summaries.map((l) => l.msg.replace(/\(the oldest \d+ s\)/, '(the oldest N s)')).sort()).toEqual(
    [...new Set(old.map((r) => r.shardId))]
      .sort()
      .map(
        (shardId) =>
          `1 record(s) of ${shardId} older than maxRecordAgeMs=60000 when read (the oldest N s): emitted on stream "dead", and passed by the checkpoint`,
      ),
  );
  expect(driver.errors).toEqual([]);

  await driver.stop();
  const again = await restartEmitsNothing(stream, app, overrides, options);
  expect(again.emits).toEqual([]);
  expect(again.errors).toEqual([]);
});

test('without dead letters, old records are skipped and counted, nothing is emitted, the checkpoints pass them and a restart reads nothing again', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 2);
  const old = await putAged(stream, 2 * HOUR, 30, 'old');
  const app = uniqueName('app');
  const overrides = { maxRecordAgeMs: LIMIT_MS, statsIntervalMs: 200 };
  const driver = await suite.spout(stream, app, overrides);
  const pumped = await driver.pump(() => (driver.lastStats()?.tooOld ?? 0) >= old.length);
  expect({ pumped, log: pumped ? '' : driver.logText() }).toEqual({ pumped: true, log: '' });
  await checkpointsAtTheEnd(stream, app, old);
  expect(driver.emits).toEqual([]);
  expect(driver.lastStats()).toMatchObject({ tooOld: old.length, emitted: 0, deadLettered: 0, skipped: 0 });
  expect(driver.errors).toEqual([]);

  await driver.stop();
  const again = await restartEmitsNothing(stream, app, overrides);
  expect(again.emits).toEqual([]);
});
