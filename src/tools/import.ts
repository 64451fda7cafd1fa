/**
 * `kinesis-spout import`: reads an old Storm Kinesis spout's positions (importSource.ts), plans
 * (importPlan.ts), shows the plan, refuses while this application holds a lease, asks for `yes`, then writes
 * the bootstrap (when the application never started) and every checkpoint in one ZooKeeper transaction with
 * version checks: the state changed since the plan means nothing is written.
 */
import { identityMismatch } from '../coordination/streamIdentity';
import { ZkSession } from '../coordination/zk';
import type { ZooKeeper } from '../coordination/zooKeeper';
import type { Position } from '../core/position';
import { describeError } from '../errors';
import { shardIteratorAt } from '../kinesis/iterators';
import { describeStream, listShards } from '../kinesis/shards';
import { type Application, connectApplication, readToolConfig, selectStreams } from './application';
import { ExitCode, ToolError } from './exitCodes';
import { type ImportFacts, type ImportLine, planImport, writes } from './importPlan';
import { type KclLocation, readKclSource } from './importKcl';
import { readSourceState, sourcePath, type SourceLocation } from './importSource';
import { renderImportPlan } from './importView';
import { confirm, type ToolIo } from './io';

export interface ImportOptions {
  config: string;
  stream?: string;
  source: (Omit<SourceLocation, 'stream'> & { stream?: string; zookeeper: string }) | ({ from: 'kcl' } & KclLocation);
  dryRun: boolean;
  overwrite: boolean;
  yes: boolean;
}

/** The source's ZooKeeper, read only; the old spouts made their nodes open to anyone (no ACL, no auth). */
async function readSource(location: SourceLocation, connect: string) {
  let zk: ZooKeeper;
  try {
    zk = await ZkSession.connect({ connect, sessionTimeoutMs: 10_000 });
  } catch (err) {
    throw new ToolError(ExitCode.Failed, `cannot reach the source's ZooKeeper at ${connect}: ${describeError(err)}`);
  }
  try {
    const state = await readSourceState(zk, location);
    if (!state) {
      const parent = sourcePath(location).replace(/\/[^/]*$/, '') || '/';
      const siblings = await zk.getChildren(parent).catch(() => []);
      throw new ToolError(
        ExitCode.NoApplication,
        `no ${location.from} state at ${sourcePath(location)} in ZooKeeper ${connect}` +
          (siblings.length > 0 ? `; ${parent} holds: ${siblings.sort().join(', ')}` : `; nothing under ${parent}`),
      );
    }
    if (state.unreadable.size > 0)
      throw new ToolError(
        ExitCode.Failed,
        `source nodes not as ${location.from} writes them, nothing imported: ${[...state.unreadable.values()].join('; ')}`,
      );
    return state;
  } finally {
    zk.close();
  }
}

/**
 * Kinesis says whether each imported sequence number is one of its shard's: a source read from another
 * stream (shard ids repeat across streams) is refused here, not by every spout task at its first read.
 */
async function checkPositions(
  app: Pick<Application, 'kinesis' | 'stream'>,
  lines: readonly ImportLine[],
  sourceStream: string,
): Promise<void> {
  for (const line of lines) {
    if (line.to?.kind !== 'AFTER') continue;
    try {
      await shardIteratorAt(app.kinesis, app.stream, line.shardId, line.to);
    } catch (err) {
      // Kinesis says InvalidArgumentException; emulators may say ResourceNotFoundException (the stream was just listed).
      const name = (err as { name?: string })?.name;
      if (name !== 'InvalidArgumentException' && name !== 'ResourceNotFoundException') throw err;
      throw new ToolError(
        ExitCode.Usage,
        `${line.shardId}: Kinesis refuses ${line.to.sequenceNumber} as a position in it (${describeError(err)}); ` +
          `was stream ${sourceStream} of the source the one ${app.stream.streamName} is? (--source-stream); nothing written`,
      );
    }
  }
}

export async function runImport(options: ImportOptions, io: ToolIo): Promise<number> {
  const [config] = selectStreams(readToolConfig(options.config), options.stream, 'import', false);
  const app = await connectApplication(config);
  try {
    const { store } = app;
    const sourceStream = options.source.stream ?? app.stream.streamName;
    const zkSource =
      options.source.from === 'kcl'
        ? undefined
        : await readSource({ ...options.source, stream: sourceStream }, options.source.zookeeper);
    const [identity, listing, finished, ended, leases, recorded] = await Promise.all([
      describeStream(app.kinesis, app.stream),
      listShards(app.kinesis, app.stream),
      store.finishedShards(),
      store.endedShards(),
      store.leases(),
      store.checkpointedShards(),
    ]);
    if (app.bootstrap) {
      const mismatch = identityMismatch(app.bootstrap, identity, store.base);
      if (mismatch) throw new ToolError(ExitCode.Failed, mismatch.message);
    }
    const checkpoints = new Map<string, { position: Position; version: number }>();
    for (const shardId of recorded) {
      const checkpoint = await store.readCheckpoint(shardId).catch((err: unknown) => {
        throw new ToolError(
          ExitCode.Failed,
          `${store.checkpointPath(shardId)} cannot be read (${describeError(err)}); fix or remove it by hand before an import`,
        );
      });
      if (checkpoint) checkpoints.set(shardId, checkpoint);
    }
    const facts: ImportFacts = { listing, checkpoints, finished, ended, leases, bootstrap: app.bootstrap, identity };
    const source =
      options.source.from === 'kcl'
        ? await readKclSource(
            options.source,
            config,
            app.kinesis,
            app.stream,
            identity.createdMs,
            io.now,
            (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
          )
        : zkSource!;
    const plan = planImport(facts, source, {
      overwrite: options.overwrite,
      nowMs: io.now(),
      initialPosition: config.initialPosition,
    });
    const where = `application ${config.applicationName}, stream ${app.stream.streamName} (${store.base})`;
    io.out(renderImportPlan(plan, where, `${options.source.from} at ${source.path}`, source.notes));
    if (plan.leases.length > 0)
      throw new ToolError(
        ExitCode.LeasesHeld,
        `refusing: this application's spout is running (lease(s) held: ${plan.leases.map((l) => `${l.shardId} by ${l.owner}`).join(', ')}). ` +
          'Kill its topology (storm kill) and wait until status shows no owner, then import again.',
      );
    const toWrite = writes(plan);
    if (toWrite.length === 0 && !plan.createBootstrap) {
      io.out('nothing to write');
      return ExitCode.Ok;
    }
    await checkPositions(app, toWrite, sourceStream);
    if (options.dryRun) {
      io.out(`dry run: nothing written (${toWrite.length} checkpoint(s) would be)`);
      return ExitCode.Ok;
    }
    const declined = await confirm(io, {
      yes: options.yes,
      question: `Write ${toWrite.length} checkpoint(s)?`,
      nothing: 'nothing written',
      terminalOnly: true,
    });
    if (declined !== undefined) return declined;
    // The empty folders of the layout, as the spout's first start makes them (with its ACLs); they hold nothing.
    await store.ensureLayout();
    const written = await store.importCheckpoints(
      plan.createBootstrap,
      toWrite.map((l) => ({ shardId: l.shardId, position: l.to!, checkpointVersion: l.existing?.version })),
    );
    if (!written)
      throw new ToolError(
        ExitCode.Conflict,
        'the state changed since the plan was made (a checkpoint or the bootstrap was written, or a lease taken): nothing written; run import again',
      );
    io.out(
      `written: ${toWrite.length} checkpoint(s)${plan.createBootstrap ? ' and the bootstrap' : ''}. Submit the topology: its tasks resume from there.`,
    );
    return ExitCode.Ok;
  } finally {
    app.close();
  }
}
