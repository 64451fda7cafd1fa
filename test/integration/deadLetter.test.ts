/** A record the topology fails every time: given up after retry.maxRetries, once, on the dead-letter stream. */
import { createStream, putRecords, type PutResult } from '../helpers/kinesisAdmin';
import { readJson, spoutSuite, stateBase, uniqueName, waitFor } from '../helpers/fixture';
import { DEFAULT_FIELDS, type Emit } from '../helpers/stormDriver';

const suite = spoutSuite();
const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;
const MAX_RETRIES = 2;

test('a record failed every time is emitted once on the dead-letter stream with its fields, attempts and last failure time; the checkpoint passes it; nothing else is lost', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 2);
  const put = await putRecords(
    suite.services.client,
    stream,
    Array.from({ length: 80 }, (_, i) => ({ partitionKey: `key-${i % 8}`, data: `record ${i}` })),
  );
  // The poison has records after it on its shard: the checkpoint must move past it to reach them.
  const poison = put[10];
  const poisonId = idOf(poison);
  const lastOnShard = put.filter((r) => r.shardId === poison.shardId).pop()!;
  expect(lastOnShard.sequenceNumber).not.toBe(poison.sequenceNumber);

  const app = uniqueName('app');
  const driver = await suite.spout(
    stream,
    app,
    {
      retry: {
        maxRetries: MAX_RETRIES,
        onExhausted: 'deadLetter',
        deadLetterStream: 'poison',
        initialBackoffMs: 10,
        maxBackoffMs: 50,
      },
    },
    { streams: { poison: [...DEFAULT_FIELDS, 'attempts', 'lastFailureTime'] } },
  );
  const acked = new Set<string>();
  const deadLetters: Emit[] = [];
  let poisonEmits = 0;
  const startedAt = Date.now();
  const pumped = await driver.pump(() => deadLetters.length >= 1 && acked.size >= put.length - 1, {
    onEmit: async (emit) => {
      if (emit.stream === 'poison') {
        deadLetters.push(emit);
        return;
      }
      if (emit.id === poisonId) {
        poisonEmits += 1;
        const emitted = await driver.fail(emit.id);
        // The dead letter answers the fail that gives the record up.
        deadLetters.push(...emitted.filter((e) => e.stream === 'poison'));
        return;
      }
      acked.add(emit.id);
      await driver.ack(emit.id);
    },
  });
  expect({ pumped, log: pumped ? '' : driver.logText() }).toEqual({ pumped: true, log: '' });

  // The checkpoint of the poison's shard passes it, up to the shard's last record.
  const checkpoint = `${stateBase(stream, app)}/checkpoints/${poison.shardId}`;
  await waitFor(
    'checkpoint past the dead letter',
    async () =>
      ((await readJson(suite.services.inspector, checkpoint))?.position as { sequenceNumber?: string } | undefined)
        ?.sequenceNumber === lastOnShard.sequenceNumber,
  );
  // Give the spout time to emit anything more it might: nothing may come, the poison included.
  const more = await driver.pump(() => false, { timeoutMs: 1_000 });
  expect(more).toBe(false);

  expect(deadLetters).toHaveLength(1);
  const [letter] = deadLetters;
  expect('id' in letter.frame).toBe(false);
  expect(letter.frame.need_task_ids).toBe(false);
  const [partitionKey, data, shardId, sequenceNumber, arrival, attempts, lastFailureTime] = letter.tuple;
  expect({ partitionKey, data, shardId, sequenceNumber, attempts }).toEqual({
    partitionKey: 'key-2',
    data: 'record 10',
    shardId: poison.shardId,
    sequenceNumber: poison.sequenceNumber,
    attempts: MAX_RETRIES + 1,
  });
  expect(letter.tuple).toHaveLength(DEFAULT_FIELDS.length + 2);
  expect(typeof arrival).toBe('number');
  expect(lastFailureTime).toBeGreaterThanOrEqual(startedAt);
  expect(lastFailureTime).toBeLessThanOrEqual(Date.now());
  expect(poisonEmits).toBe(MAX_RETRIES + 1);
  expect([...acked].sort()).toEqual(
    put
      .map(idOf)
      .filter((id) => id !== poisonId)
      .sort(),
  );
  expect(driver.emits.filter((e) => e.stream !== 'poison' && e.id !== poisonId)).toHaveLength(put.length - 1);
  expect(driver.errors).toEqual([]);
  expect(
    driver.logs.some((l) =>
      l.msg.includes(`record ${poisonId} failed 3 time(s), over retry.maxRetries=2: emitted on stream "poison"`),
    ),
  ).toBe(true);
});

test('dead letters on a stream the topology does not declare are a configuration error at start', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  const driver = await suite.spout(stream, uniqueName('app'), { retry: { onExhausted: 'deadLetter' } });
  await driver.next();
  await waitFor('the configuration error', () => driver.errors.length > 0);
  expect(driver.errors[0]).toMatch(
    /kinesis.spout.retry.deadLetterStream = "deadLetter": the topology declares no such stream/,
  );
});
