/** `kinesis-spout status`: the application's state and every shard's, once or redrawn until Ctrl-C. */
import type { Position } from '../core/position';
import { describeError } from '../errors';
import { openApplication, readToolConfig, type Application } from './application';
import { ExitCode, ToolError } from './exitCodes';
import type { ToolIo } from './io';
import { lagOf } from './lag';
import { ShardState, shardStatuses } from './shardStates';
import { readSnapshot } from './snapshot';
import { renderStatus, statusReport, type StatusReport } from './statusView';

export interface StatusOptions {
  config: string;
  json: boolean;
  watchSeconds: number | undefined;
}

const CLEAR_SCREEN = '\x1b[2J\x1b[H';

export async function statusOnce(app: Application, now: () => number): Promise<StatusReport> {
  const snapshot = await readSnapshot(app, now);
  const shards = shardStatuses(snapshot, app.config.ordering);
  const positions = new Map<string, Exclude<Position, { kind: 'SHARD_END' }>>();
  for (const shard of shards) {
    if (shard.state === ShardState.Finished || shard.state === ShardState.Expired) continue;
    const position = shard.checkpoint?.position ?? shard.startsAt;
    if (position && position.kind !== 'SHARD_END') positions.set(shard.shardId, position);
  }
  const lags = await lagOf(app.kinesis, app.stream, positions, now());
  return statusReport(app.config, snapshot, shards, lags);
}

export async function runStatus(options: StatusOptions, io: ToolIo): Promise<number> {
  const config = readToolConfig(options.config);
  let app: Application | undefined = await openApplication(config);
  try {
    const show = (report: StatusReport) => io.out(options.json ? JSON.stringify(report) : renderStatus(report));
    if (options.watchSeconds === undefined) {
      const report = await statusOnce(app, io.now);
      show(report);
      return report.shards.some((s) => s.problem) ? ExitCode.Problem : ExitCode.Ok;
    }
    let stopped = false;
    void io.interrupted().then(() => (stopped = true));
    while (!stopped) {
      try {
        // A watch outlives a ZooKeeper session that expired during an outage: it opens a new one.
        app ??= await openApplication(config);
        const report = await statusOnce(app, io.now);
        if (!options.json && io.interactive) io.out(CLEAR_SCREEN);
        show(report);
        if (!options.json) io.out(`\n(every ${options.watchSeconds} s; Ctrl-C to stop)\n`);
      } catch (err) {
        // A ZooKeeper or Kinesis hiccup should not end a watch: say it and try again at the next round.
        io.err(
          `status failed: ${err instanceof ToolError ? err.message : describeError(err)}; trying again in ${options.watchSeconds} s`,
        );
        if (app && (app.zk.connectionState === 'expired' || app.zk.connectionState === 'closed')) {
          app.close();
          app = undefined;
        }
      }
      await Promise.race([new Promise((r) => setTimeout(r, options.watchSeconds! * 1000)), io.interrupted()]);
    }
    return ExitCode.Ok;
  } finally {
    app?.close();
  }
}
