/**
 * `kinesis-spout export --to kcl`: writes a KCL 2.x/3.x lease table from this application's checkpoints, so
 * KCL started on it continues where the spout stopped. Refuses while a task of the application holds a lease
 * or a KCL worker renews one; prints the plan; --dry-run stops there; asks for `yes`. Each lease is written
 * with a condition (absent, or still what the plan read); the first that fails undoes the ones this run
 * wrote, so the table ends as it was or as planned. Re-running it finds every lease already exported.
 */
import { type Position, startPositions } from '../core/position';
import { describeError } from '../errors';
import { listShards, describeStream } from '../kinesis/shards';
import { connectApplication, readToolConfig, selectStreams } from './application';
import { ExitCode, ToolError } from './exitCodes';
import { KCL_DEFAULT_FAILOVER_MS, recordShape } from './importKcl';
import { confirm, type ToolIo } from './io';
import { describeKcl, type Item, kclCheckpoint, leaseItem, liveLeases, parseLease, sameCheckpoint } from './kclLeases';
import { parentsFirst } from './resetPlan';

export interface ExportOptions {
  config: string;
  stream?: string;
  table: string;
  endpoint?: string;
  createTable: boolean;
  /** KCL multi-stream lease keys (`<account>:<stream>:<creationEpoch>:<shardId>`) under this account id. */
  multiStreamAccount?: string;
  failoverMs?: number;
  dryRun: boolean;
  overwrite: boolean;
  yes: boolean;
}

interface ExportLine {
  shardId: string;
  item: Item;
  existing?: Item;
  action: 'write' | 'already exported' | 'kept';
  text: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `openTable`: the lease table's client (a test wraps it to fail a write midway). */
export async function runExport(
  options: ExportOptions,
  io: ToolIo,
  openTable?: typeof import('../kinesis/kclLeaseTable')['openLeaseTable'],
): Promise<number> {
  const [config] = selectStreams(readToolConfig(options.config), options.stream, 'export', false);
  const app = await connectApplication(config);
  const open = openTable ?? (await import('../kinesis/kclLeaseTable')).openLeaseTable;
  const table = open({ ...config, table: options.table, endpoint: options.endpoint });
  try {
    const { store } = app;
    if (!app.bootstrap)
      throw new ToolError(
        ExitCode.NoApplication,
        `application ${config.applicationName} has never started: nothing to export`,
      );
    const held = await store.leases();
    if (held.size > 0)
      throw new ToolError(
        ExitCode.LeasesHeld,
        `refusing: this application's spout is running (lease(s) held: ${[...held].map(([s, o]) => `${s} by ${o}`).join(', ')}). ` +
          'Kill its topology (storm kill) and wait until status shows no owner, then export again.',
      );
    const [identity, listing, finished] = await Promise.all([
      describeStream(app.kinesis, app.stream),
      listShards(app.kinesis, app.stream),
      store.finishedShards(),
    ]);
    const start = startPositions(app.bootstrap);
    const keyOf = (shardId: string) =>
      options.multiStreamAccount
        ? `${options.multiStreamAccount}:${app.stream.streamName}:${Math.floor(identity.createdMs / 1000)}:${shardId}`
        : shardId;
    let items: Item[] | undefined;
    try {
      items = await table.scan();
      if (items?.some((i) => i.leaseOwner?.S)) {
        // A KCL worker renews its leases: read again after its failover time to tell live from stopped.
        const first = items.map((i) => parseLease(i));
        await sleep(options.failoverMs ?? KCL_DEFAULT_FAILOVER_MS);
        items = (await table.scan()) ?? [];
        const live = liveLeases(
          first,
          items.map((i) => parseLease(i)),
        );
        if (live.length > 0)
          throw new ToolError(
            ExitCode.LeasesHeld,
            `refusing: KCL workers are running on ${options.table} (lease(s) renewed: ${live.map((l) => `${l.shardId} by ${l.owner}`).join(', ')}). Stop them first.`,
          );
      }
    } catch (err) {
      if (err instanceof ToolError) throw err;
      throw new ToolError(ExitCode.Failed, `cannot read DynamoDB table ${options.table}: ${describeError(err)}`);
    }
    if (!items && !options.createTable)
      throw new ToolError(
        ExitCode.NoApplication,
        `no DynamoDB table ${options.table}: pass --create-table to create it (KCL's default lease table name is its applicationName)`,
      );
    const byKey = new Map((items ?? []).map((i) => [i.leaseKey?.S, i]));
    const timestamps = new Set<number>();
    const lines: ExportLine[] = [];
    for (const shardId of parentsFirst(listing)) {
      const shard = listing.find((s) => s.shardId === shardId)!;
      const stored = await store.readCheckpoint(shardId);
      const position: Position = finished.has(shardId) ? { kind: 'SHARD_END' } : (stored?.position ?? start(shardId));
      if (position.kind === 'AT_TIMESTAMP') timestamps.add(position.timestampMs);
      const shape =
        position.kind === 'AFTER' && position.subSequence === undefined
          ? await recordShape(app.kinesis, app.stream, shardId, position.sequenceNumber).catch(() => undefined)
          : undefined;
      const checkpoint = kclCheckpoint(position, shape);
      const children = listing.filter((s) => s.parents.includes(shardId)).map((s) => s.shardId);
      const range = shard.hashKeyRange;
      const item = leaseItem(keyOf(shardId), checkpoint, {
        parents: shard.parents,
        ...(checkpoint.kind === 'SHARD_END' && { children }),
        ...(range && { hashRange: { start: BigInt(range.start), end: BigInt(range.end) } }),
      });
      const existing = byKey.get(keyOf(shardId));
      const action = !existing
        ? 'write'
        : sameCheckpoint(existing, checkpoint)
          ? 'already exported'
          : options.overwrite
            ? 'write'
            : 'kept';
      const text =
        `${shardId}: ${stored ? 'checkpoint' : finished.has(shardId) ? 'finished' : 'no checkpoint, starts'} ` +
        `-> ${describeKcl(checkpoint)}` +
        (action === 'kept'
          ? ` [kept: the table has ${existing!.checkpoint?.S} (--overwrite replaces it)]`
          : ` [${action}]`);
      lines.push({ shardId, item, existing, action, text });
    }
    if (timestamps.size > 1)
      throw new ToolError(
        ExitCode.Failed,
        `shards start at ${timestamps.size} different timestamps; KCL keeps one (its configured AT_TIMESTAMP): read them past that first, or reset them to one`,
      );
    io.out(
      [
        `export to KCL lease table ${options.table}${items ? '' : ' (created)'} from application ${config.applicationName}, stream ${app.stream.streamName}:`,
        ...lines.map((l) => `  ${l.text}`),
        ...[...timestamps].map(
          (t) =>
            `note: configure KCL's initial position AT_TIMESTAMP ${new Date(t).toISOString()}: its AT_TIMESTAMP leases take the time from there`,
        ),
      ].join('\n'),
    );
    const toWrite = lines.filter((l) => l.action === 'write');
    if (toWrite.length === 0) {
      io.out('nothing to write');
      return ExitCode.Ok;
    }
    if (options.dryRun) {
      io.out(`dry run: nothing written (${toWrite.length} lease(s) would be)`);
      return ExitCode.Ok;
    }
    const declined = await confirm(io, {
      yes: options.yes,
      question: `Write ${toWrite.length} lease(s)?`,
      nothing: 'nothing written',
      terminalOnly: true,
    });
    if (declined !== undefined) return declined;
    if (!items) await table.create();
    const done: ExportLine[] = [];
    for (const line of toWrite) {
      let ok: boolean;
      try {
        ok = await table.put(line.item, line.existing);
      } catch (err) {
        await undo(table, done);
        throw new ToolError(
          ExitCode.Failed,
          `writing ${line.shardId}'s lease failed (${describeError(err)}); the leases written before it were removed: nothing exported`,
        );
      }
      if (!ok) {
        await undo(table, done);
        throw new ToolError(
          ExitCode.Conflict,
          `${line.shardId}'s lease changed since the plan was made: the leases written before it were removed, nothing exported; run export again`,
        );
      }
      done.push(line);
    }
    io.out(
      `written: ${done.length} lease(s). Start the KCL application on table ${options.table}: it continues from there.`,
    );
    return ExitCode.Ok;
  } finally {
    table.close();
    app.close();
  }
}

/** Puts back what the table held before this run: created leases removed, replaced ones restored. */
async function undo(
  table: { remove(i: Item): Promise<boolean>; put(i: Item, e: Item | undefined): Promise<boolean> },
  done: readonly ExportLine[],
) {
  for (const line of [...done].reverse()) {
    if (line.existing) await table.put(line.existing, line.item);
    else await table.remove(line.item);
  }
}
