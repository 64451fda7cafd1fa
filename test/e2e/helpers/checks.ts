/** What the e2e scenarios assert about what Storm delivered (the recorded file) and acked (ZooKeeper). */
import { listAllShards, type PutResult } from '../../helpers/kinesisAdmin';
import { readJson, type Services } from '../../helpers/fixture';
import type { LocalTopology, Received } from './topology';

export const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;

export interface Put extends PutResult {
  partitionKey: string;
  data: string;
}

export function records(n: number, prefix: string, keys = 16): { partitionKey: string; data: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    partitionKey: `key-${i % keys}`,
    data: JSON.stringify({ n: i, prefix }),
  }));
}

export function withInput(input: { partitionKey: string; data: string }[], results: PutResult[]): Put[] {
  return results.map((r, i) => ({ ...r, ...input[i] }));
}

export function missing(received: Received[], put: PutResult[]): string[] {
  const seen = new Set(received.map((r) => r.id));
  return put.map(idOf).filter((id) => !seen.has(id));
}

/** Waits until every put record has been received at least once (across runs sharing the file). */
export async function waitReceived(topology: LocalTopology, put: PutResult[], timeoutMs = 60_000): Promise<Received[]> {
  let left: string[] = [];
  try {
    return await topology.waitFor(
      'every record put to be received',
      () => {
        const received = topology.received();
        left = missing(received, put);
        return left.length === 0 && received;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(
      `${left.length} of ${put.length} records never received, e.g. ${left.slice(0, 3).join(', ')}\n${(err as Error).message}`,
    );
  }
}

/**
 * Shards whose checkpoint does not yet cover the last record put to them (a closed shard must be at
 * SHARD_END). The spout moves a checkpoint only past records below which everything was acked.
 */
export async function checkpointsBehind(
  services: Services,
  stream: string,
  app: string,
  put: PutResult[],
): Promise<string[]> {
  const last = new Map<string, bigint>();
  for (const r of put) {
    const seq = BigInt(r.sequenceNumber);
    if ((last.get(r.shardId) ?? -1n) < seq) last.set(r.shardId, seq);
  }
  const behind: string[] = [];
  for (const shard of await listAllShards(services.client, stream)) {
    const closed = shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
    const target = last.get(shard.ShardId!);
    if (!closed && target === undefined) continue;
    const path = `/e2e/${app}/${stream}/checkpoints/${shard.ShardId}`;
    const position = (await readJson(services.inspector, path))?.position as
      | { kind: string; sequenceNumber?: string }
      | undefined;
    const done = closed
      ? position?.kind === 'SHARD_END'
      : position?.kind === 'AFTER' && BigInt(position.sequenceNumber!) >= target!;
    if (!done) behind.push(`${shard.ShardId}: ${JSON.stringify(position)}`);
  }
  return behind;
}

/** Waits until every record put is acked, as far as the checkpoints tell. */
export async function waitAllAcked(
  services: Services,
  topology: LocalTopology,
  stream: string,
  app: string,
  put: PutResult[],
  timeoutMs = 30_000,
): Promise<void> {
  let behind: string[] = [];
  await topology
    .waitFor(
      'checkpoints to cover every record put',
      async () => {
        behind = await checkpointsBehind(services, stream, app, put);
        return behind.length === 0;
      },
      timeoutMs,
    )
    .catch((err: Error) => {
      throw new Error(`checkpoints behind: ${behind.join('; ')}\n${err.message}`);
    });
}

/**
 * Per partition key, the first delivery of each record comes in put order (replays may come later).
 * Returns one line per first delivery that came after a record put later with the same key.
 */
export function outOfOrderKeys(received: Received[], put: Put[]): string[] {
  const rank = new Map(put.map((r, i) => [idOf(r), i]));
  const seen = new Set<string>();
  const lastRank = new Map<string, number>();
  const bad: string[] = [];
  for (const r of received) {
    if (seen.has(r.id) || !rank.has(r.id)) continue;
    seen.add(r.id);
    const key = String(r.values.partitionKey);
    const current = rank.get(r.id)!;
    const previous = lastRank.get(key) ?? -1;
    if (current < previous) bad.push(`${key}: put #${current} (${r.id}) delivered after put #${previous}`);
    lastRank.set(key, Math.max(previous, current));
  }
  return bad;
}

export function duplicates(received: Received[]): number {
  return received.length - new Set(received.map((r) => r.id)).size;
}

/** Java's String.hashCode, to recompute which ids the example's FailingBolt fails. */
export function javaHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i += 1) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

export function failSelected(id: string, fraction: number): boolean {
  const mod = ((javaHashCode(id) % 1000) + 1000) % 1000;
  return id !== '' && mod < Math.round(fraction * 1000);
}

/** Each received tuple carries its record's fields as declared; `data` as put, or parsed with dataFormat json. */
export function expectFieldsAsPut(received: Received[], put: Put[], dataFormat: 'utf8' | 'json' = 'utf8'): void {
  const byId = new Map(put.map((r) => [idOf(r), r]));
  for (const r of received) {
    const source = byId.get(r.id)!;
    expect(r.values).toEqual({
      partitionKey: source.partitionKey,
      data: dataFormat === 'json' ? JSON.parse(source.data) : source.data,
      shardId: source.shardId,
      sequenceNumber: source.sequenceNumber,
      arrivalTimestamp: expect.any(Number),
    });
  }
}
