/**
 * Memory that does not grow per idle shard (issue 20, item 3), measured in the spout process itself: its
 * `stats:` lines give the V8 heap and the off-heap (Buffer) bytes after a full GC (the process runs with
 * `--expose-gc`), less compiled code (the JIT's, which grows with use, not with what is held), so what is
 * compared is what a held shard retains, not garbage or timing. One process holding 1 idle shard against
 * one holding 33: the difference per extra shard stays under a bound (about 40 KB measured, with the sockets), and the
 * sockets open to Kinesis stay within the process's bounds (the SDK's agents and the lean GetRecords pool,
 * MAX_SOCKETS each).
 */
import { MAX_PROCESS_SOCKETS } from '../../src/kinesis/client';
import { socketsTo } from '../../bench/idleMemory';
import { createStream } from '../helpers/kinesisAdmin';
import { spoutSuite, uniqueName } from '../helpers/fixture';
import { SHELL_SPOUT_LAUNCH } from '../helpers/spoutNode';
import type { StormDriver } from '../helpers/stormDriver';

const suite = spoutSuite();
/** Retained bytes a held idle shard may add: a lease, a reader, its counters; no buffers, no socket. */
const PER_SHARD_BOUND = 64 * 1024;

interface Retained {
  bytes: number;
  sockets: number;
}

/** Pumps `driver` (nothing to emit) until `shards` are held and three more stats lines came. */
async function retainedWhenIdle(driver: StormDriver, shards: number): Promise<Retained> {
  let seen = 0;
  const samples: number[] = [];
  const done = () => {
    const lines = driver.stats();
    for (const stats of lines.slice(seen))
      if (stats.shards === shards) samples.push((stats.heapDataMiB + stats.externalMiB) * 2 ** 20);
    seen = lines.length;
    // The first lines after the last take still see its garbage-free but unsettled state.
    return samples.length >= 6;
  };
  if (!(await driver.pump(done, { timeoutMs: 120_000 })))
    throw new Error(`${shards} idle shards never held\n${driver.logText()}`);
  const settled = samples.slice(-3).sort((a, b) => a - b);
  return { bytes: settled[1], sockets: socketsTo(driver.pid, Number(new URL(suite.services.kinesis.endpoint).port)) };
}

async function idleProcess(shards: number): Promise<Retained> {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, shards);
  const driver = await suite.spout(
    stream,
    uniqueName('app'),
    { statsIntervalMs: 1_000, idlePollIntervalMs: 1_000 },
    { nodeOptions: [...SHELL_SPOUT_LAUNCH.nodeOptions, '--expose-gc'], keepHistory: false },
  );
  try {
    return await retainedWhenIdle(driver, shards);
  } finally {
    await driver.stop(3_000);
  }
}

test('an idle held shard retains under 64 KB after GC, and 33 shards stay within the process socket bounds', async () => {
  const one = await idleProcess(1);
  const many = await idleProcess(33);
  const perShard = (many.bytes - one.bytes) / 32;
  process.stdout.write(
    `retained after GC: 1 shard ${(one.bytes / 2 ** 20).toFixed(1)} MiB, 33 shards ${(many.bytes / 2 ** 20).toFixed(1)} MiB: ${Math.round(perShard / 1024)} KiB per shard; ${many.sockets} sockets\n`,
  );
  expect(perShard).toBeLessThan(PER_SHARD_BOUND);
  expect(many.sockets).toBeLessThanOrEqual(MAX_PROCESS_SOCKETS);
});
