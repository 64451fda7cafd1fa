/**
 * A Kinesis emulator's own latency (kinesis-local's, or the fast one's), measured apart from the spout: one
 * client, one call at a time, on a stream of
 * n shards (one record in each): a whole listing (ListShards, every page), GetShardIterator and GetRecords
 * on shards drawn in turn, DescribeStreamSummary. What a pickup at n shards costs in the emulator alone.
 */
import {
  DeleteStreamCommand,
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
} from '@aws-sdk/client-kinesis';
import { createStream, listAllShards, putRecords } from '../../test/helpers/kinesisAdmin';
import { summarize, type Summary } from '../lib';
import type { ScaleKinesis } from '../scale';

export interface EmulatorFigures {
  /** Absent in results from before there was a choice: kinesis-local. */
  kinesis?: ScaleKinesis;
  shards: number;
  samples: number;
  listAllShardsMs: Summary;
  getShardIteratorMs: Summary;
  getRecordsMs: Summary;
  describeStreamSummaryMs: Summary;
}

async function timed(samples: number, call: (i: number) => Promise<unknown>): Promise<Summary> {
  const took: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const at = performance.now();
    await call(i);
    took.push(Math.round((performance.now() - at) * 10) / 10);
  }
  return summarize(took);
}

export async function emulatorBench(
  kinesis: ScaleKinesis,
  client: KinesisClient,
  sizes: number[],
  samples: number,
  log: (line: string) => void,
): Promise<EmulatorFigures[]> {
  const out: EmulatorFigures[] = [];
  for (const shards of sizes) {
    const stream = `bench-emulator-${shards}-${process.pid}`;
    await createStream(client, stream, shards);
    try {
      const all = await listAllShards(client, stream);
      await putRecords(
        client,
        stream,
        all.map((s) => ({ partitionKey: s.ShardId!, data: 'x' })),
      );
      const shardAt = (i: number) => all[(i * 7919) % all.length].ShardId!;
      const iterator = (i: number) =>
        client.send(
          new GetShardIteratorCommand({ StreamName: stream, ShardId: shardAt(i), ShardIteratorType: 'TRIM_HORIZON' }),
        );
      const iterators = await Promise.all(Array.from({ length: samples }, (_, i) => iterator(i)));
      const figures: EmulatorFigures = {
        kinesis,
        shards,
        samples,
        listAllShardsMs: await timed(samples, () => listAllShards(client, stream)),
        getShardIteratorMs: await timed(samples, iterator),
        getRecordsMs: await timed(samples, (i) =>
          client.send(new GetRecordsCommand({ ShardIterator: iterators[i].ShardIterator!, Limit: 1000 })),
        ),
        describeStreamSummaryMs: await timed(samples, () =>
          client.send(new DescribeStreamSummaryCommand({ StreamName: stream })),
        ),
      };
      out.push(figures);
      log(
        `${kinesis} alone at ${shards} shards: ListShards (all) ${figures.listAllShardsMs.median} ms, GetShardIterator ${figures.getShardIteratorMs.median} ms, ` +
          `GetRecords ${figures.getRecordsMs.median} ms, DescribeStreamSummary ${figures.describeStreamSummaryMs.median} ms (medians of ${samples})`,
      );
    } finally {
      await client
        .send(new DeleteStreamCommand({ StreamName: stream, EnforceConsumerDeletion: true }))
        .catch(() => undefined);
    }
  }
  return out;
}
