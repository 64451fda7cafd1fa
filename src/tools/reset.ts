/**
 * `kinesis-spout reset`: plans (resetPlan.ts), shows the plan, refuses while leases are held (unless
 * --force), asks for `yes`, then writes every change in one ZooKeeper transaction with the same versioned
 * compare-and-set the spout uses: the state changed since the plan means nothing is written.
 */
import { describeError } from '../errors';
import { shardIteratorAt } from '../kinesis/iterators';
import { identityMismatch } from '../coordination/streamIdentity';
import type { ResetTarget } from './args';
import { openApplication, readToolConfig, selectStreams, type Application } from './application';
import { ExitCode, ToolError, usageError } from './exitCodes';
import { confirm, type ToolIo } from './io';
import { planReset } from './resetPlan';
import { forceWarning, renderPlan } from './resetView';
import { readSnapshot } from './snapshot';

export interface ResetOptions {
  config: string;
  /** With several streams: the one to reset (required then). */
  stream?: string;
  to: ResetTarget;
  shards: string[] | undefined;
  force: boolean;
  yes: boolean;
}

/** Kinesis says whether the sequence number is one of the shard's (else every reader of it would fail). */
async function checkSequenceNumber(app: Application, shardId: string, sequenceNumber: string): Promise<void> {
  try {
    await shardIteratorAt(app.kinesis, app.stream, shardId, { kind: 'AFTER', sequenceNumber });
  } catch (err) {
    const name = (err as { name?: string })?.name;
    if (name === 'InvalidArgumentException')
      throw usageError(`--to ${sequenceNumber}: Kinesis refuses it as a position in ${shardId}: ${describeError(err)}`);
    throw err;
  }
}

export async function runReset(options: ResetOptions, io: ToolIo): Promise<number> {
  const [config] = selectStreams(readToolConfig(options.config), options.stream, 'reset', false);
  const app = await openApplication(config);
  try {
    const snapshot = await readSnapshot(app, io.now);
    const mismatch = identityMismatch(snapshot.bootstrap, snapshot.identity, snapshot.base);
    if (mismatch) throw new ToolError(ExitCode.Failed, mismatch.message);
    const plan = planReset(snapshot, options.to, options.shards, io.now());
    io.out(
      renderPlan(plan, `application ${app.config.applicationName}, stream ${app.stream.streamName} (${snapshot.base})`),
    );
    if (plan.changes.length === 0) return ExitCode.Ok;
    if (plan.leases.length > 0 && !options.force) {
      throw new ToolError(
        ExitCode.LeasesHeld,
        `refusing: ${plan.leases.length} lease(s) held, so spout tasks are reading and would overwrite the reset with their next checkpoints. ` +
          'Stop the topology (storm kill) and wait until no lease is left (status shows owners), then run reset again; --force writes anyway.',
      );
    }
    const warning = options.force ? forceWarning(plan) : undefined;
    if (warning) io.out(warning);
    // planReset allows a sequence number only with exactly one shard named.
    if (options.to.kind === 'AFTER') await checkSequenceNumber(app, options.shards![0], options.to.sequenceNumber);
    const declined = await confirm(io, {
      yes: options.yes,
      question: `Write ${plan.changes.length} checkpoint(s)?`,
      nothing: 'nothing written',
    });
    if (declined !== undefined) return declined;
    const written = await app.store.resetCheckpoints(
      plan.changes.map((c) => ({
        shardId: c.shardId,
        position: c.to,
        checkpointVersion: c.checkpointVersion,
        removeFinished: c.removeFinished,
        removeEnded: c.removeEnded,
      })),
      !options.force,
    );
    if (!written) {
      throw new ToolError(
        ExitCode.Conflict,
        'the state changed since the plan was made (a checkpoint was written, a shard finished, or a lease taken): nothing written; run reset again',
      );
    }
    io.out(
      `written: ${plan.changes.length} checkpoint(s). Spout tasks read from there when they next take these shards (at the next start of the topology).`,
    );
    return ExitCode.Ok;
  } finally {
    app.close();
  }
}
