/**
 * `import --from kcl`: reads a KCL lease table twice, KCL's failover time apart (KCL's own test of a live
 * lease: its LeaseTaker counts a lease expired when its leaseCounter has not moved for failoverTimeMillis),
 * refuses while a lease is renewed, naming its owner, and turns each checkpoint of the stream into this
 * spout's position, reading the record at a sequence checkpoint to map KPL sub-sequence numbers exactly.
 */
import type { Position } from '../core/position';
import { describeError } from '../errors';
import type { KinesisClientOptions } from '../kinesis/client';
import { deaggregate } from '../kinesis/aggregation';
import { peekRecord } from '../kinesis/iterators';
import type { StreamRef } from '../kinesis/shards';
import type { KinesisApi } from '../kinesis/client';
import { ExitCode, ToolError } from './exitCodes';
import type { ImportSource } from './importPlan';
import {
  describeKcl,
  type KclLease,
  leasesOfStream,
  liveLeases,
  parseLease,
  type RecordShape,
  spoutPosition,
} from './kclLeases';

/** KCL's default failoverTimeMillis (1.x to 3.x). */
export const KCL_DEFAULT_FAILOVER_MS = 10_000;

export interface KclLocation {
  table: string;
  endpoint?: string;
  failoverMs: number;
  /** KCL's configured AT_TIMESTAMP initial position, for leases that still hold that sentinel. */
  timestampMs?: number;
  /** The stream in multi-stream lease keys; default the configured stream. */
  stream?: string;
}

export interface KclSource extends ImportSource {
  path: string;
  notes: string[];
}

async function readLeases(read: () => Promise<unknown[] | undefined>, table: string): Promise<KclLease[]> {
  const items = await read();
  if (!items) throw new ToolError(ExitCode.NoApplication, `no DynamoDB table ${table}: no KCL lease table to import`);
  const leases: KclLease[] = [];
  const bad: string[] = [];
  for (const item of items) {
    try {
      leases.push(parseLease(item as Parameters<typeof parseLease>[0]));
    } catch (err) {
      bad.push(err instanceof Error ? err.message : describeError(err));
    }
  }
  if (bad.length > 0)
    throw new ToolError(
      ExitCode.Failed,
      `items of ${table} not as KCL writes them, nothing imported: ${bad.join('; ')}`,
    );
  return leases;
}

/** The record at `sequenceNumber`: plain, or a KPL aggregate and its count; undefined when it is gone (trimmed). */
export async function recordShape(
  kinesis: KinesisApi,
  stream: StreamRef,
  shardId: string,
  sequenceNumber: string,
): Promise<RecordShape> {
  const record = await peekRecord(kinesis, stream, shardId, sequenceNumber);
  if (!record || record.sequenceNumber !== sequenceNumber) return undefined;
  const found = deaggregate(record.data);
  return { userRecords: found.kind === 'aggregate' ? found.records.length : 1 };
}

export async function readKclSource(
  location: KclLocation,
  client: KinesisClientOptions,
  kinesis: KinesisApi,
  stream: StreamRef & { streamName: string },
  createdMs: number,
  nowMs: () => number,
  sleep: (ms: number) => Promise<void>,
): Promise<KclSource> {
  const { openLeaseTable } = await import('../kinesis/kclLeaseTable');
  const table = openLeaseTable({ ...client, table: location.table, endpoint: location.endpoint });
  let first: KclLease[];
  let second: KclLease[];
  try {
    first = await readLeases(() => table.scan(), location.table);
    // An owned lease may be renewed: read again after the failover time. None owned: no worker holds any.
    if (first.some((l) => l.owner !== undefined)) {
      await sleep(location.failoverMs);
      second = await readLeases(() => table.scan(), location.table);
    } else second = first;
  } catch (err) {
    if (err instanceof ToolError) throw err;
    throw new ToolError(ExitCode.Failed, `cannot read DynamoDB table ${location.table}: ${describeError(err)}`);
  } finally {
    table.close();
  }
  const streamName = location.stream ?? stream.streamName;
  const { leases, others } = leasesOfStream(second, streamName, createdMs);
  const live = liveLeases(first, leases);
  if (live.length > 0)
    throw new ToolError(
      ExitCode.LeasesHeld,
      `refusing: KCL workers are running (lease(s) renewed within ${location.failoverMs} ms: ${live
        .map((l) => `${l.shardId} by ${l.owner}`)
        .join(', ')}). Stop that KCL application and wait until its leases are no longer renewed, then import again.`,
    );
  const notes: string[] = [];
  const stale = leases.filter((l) => l.owner !== undefined);
  if (stale.length > 0)
    notes.push(
      `lease(s) with an owner not renewed in ${location.failoverMs} ms (a stopped worker's): ${stale.map((l) => `${l.shardId} by ${l.owner}`).join(', ')}`,
    );
  if (others.length > 0) notes.push(`the table also holds leases of other streams, not imported: ${others.join(', ')}`);
  const targets = new Map<string, { to: Position; text: string }>();
  const problems: string[] = [];
  for (const lease of leases) {
    const cp = lease.checkpoint;
    const shape =
      cp.kind === 'SEQUENCE'
        ? await recordShape(kinesis, stream, lease.shardId, cp.sequenceNumber).catch(() => undefined)
        : undefined;
    const to = spoutPosition(cp, shape, { timestampMs: location.timestampMs, nowMs: nowMs() });
    if ('error' in to) problems.push(`${lease.shardId}: ${to.error}`);
    else targets.set(lease.shardId, { to, text: describeKcl(cp) });
  }
  if (problems.length > 0) throw new ToolError(ExitCode.Usage, `${problems.join('; ')}; nothing written`);
  if (leases.some((l) => l.checkpoint.kind === 'LATEST'))
    notes.push(
      'LATEST leases (never checkpointed by KCL) start at the time of this import, where KCL restarted now would',
    );
  return {
    path: `DynamoDB table ${location.table}`,
    positions: new Map(),
    targets,
    withoutPosition: new Set(),
    notes,
  };
}
