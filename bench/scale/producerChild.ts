/**
 * The scale run's producer as a process (bench/scale/producer.ts forks it): one record to every open shard
 * (ExplicitHashKey = the shard's starting hash key) every PUT_EVERY_MS, and at once when told the open shards
 * anew; its puts unmetered by the fast emulator. `ids` hands over the ids (`shardId:sequenceNumber`) put since
 * the last call and the failures so far.
 * `node --import tsx bench/scale/producerChild.ts <endpoint> <region> <stream> <every ms>`
 */
import { PutRecordsCommand } from '@aws-sdk/client-kinesis';
import { markUnmetered } from '../../test/helpers/fastKinesis/server';
import { kinesisClient } from '../../test/helpers/kinesisAdmin';
import { serve } from './ipc';

export interface Target {
  shardId: string;
  hashKey: string;
}

function main(): void {
  const [endpoint, region, stream, every] = process.argv.slice(2);
  const everyMs = Number(every);
  const client = markUnmetered(kinesisClient({ endpoint, region }));
  let targets: Target[] = [];
  let fresh: string[] = [];
  let putFailures = 0;
  let producing = false;
  let stopped = false;
  let loop: Promise<void> | undefined;
  let round: Promise<void> = Promise.resolve();
  let putNow: (() => void) | undefined;

  async function putRound(): Promise<void> {
    const now = targets;
    for (let i = 0; i < now.length; i += 500) {
      const batch = now.slice(i, i + 500);
      try {
        const answer = await client.send(
          new PutRecordsCommand({
            StreamName: stream,
            Records: batch.map((t) => ({
              PartitionKey: t.shardId,
              ExplicitHashKey: t.hashKey,
              Data: Buffer.from(String(Date.now())),
            })),
          }),
        );
        for (const r of answer.Records ?? []) {
          if (r.SequenceNumber && r.ShardId) fresh.push(`${r.ShardId}:${r.SequenceNumber}`);
          else putFailures += 1;
        }
      } catch {
        putFailures += batch.length;
      }
    }
  }

  serve(
    {
      /** The open shards, as the parent last listed them: put to them from now on, at once. */
      open: ({ shards }: { shards: Target[] }) => {
        targets = shards;
        putNow?.();
      },
      start: () => {
        producing = true;
        loop ??= (async () => {
          while (!stopped) {
            if (producing) {
              round = putRound();
              await round;
            }
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, everyMs);
              putNow = () => {
                clearTimeout(timer);
                resolve();
              };
            });
          }
        })();
      },
      /** No more rounds; resolves once the round under way (if any) is done, so every put is in `ids`. */
      pause: async () => {
        producing = false;
        await round;
      },
      ids: () => {
        const ids = fresh;
        fresh = [];
        return { ids, putFailures };
      },
    },
    async () => {
      stopped = true;
      putNow?.();
      await loop;
      client.destroy();
    },
  );
}

main();
