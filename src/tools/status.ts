/** `kinesis-spout status`: the application's state and every shard's, once or redrawn until Ctrl-C. */
import type { Position } from '../core/position';
import { describeError } from '../errors';
import { openApplication, readToolConfig, selectStreams, type Application } from './application';
import { ExitCode, ToolError } from './exitCodes';
import type { ToolIo } from './io';
import { lagOf } from './lag';
import { ShardState, shardStatuses } from './shardStates';
import { readSnapshot } from './snapshot';
import { renderStatus, statusReport, type StatusReport } from './statusView';

export interface StatusOptions {
  config: string;
  /** With several streams: the one to show (default: every one, in turn). */
  stream?: string;
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
  const configs = selectStreams(readToolConfig(options.config), options.stream, 'status', true);
  const several = configs.length > 1;
  const apps: (Application | undefined)[] = [];
  try {
    const show = (report: StatusReport) => io.out(options.json ? JSON.stringify(report) : renderStatus(report));
    // One stream after the other; with several, each table under its stream's name (the JSON carries it).
    const showAll = async () => {
      let problem = false;
      for (const [i, config] of configs.entries()) {
        apps[i] ??= await openApplication(config);
        const report = await statusOnce(apps[i]!, io.now);
        if (several && !options.json) io.out(`${i > 0 ? '\n' : ''}== stream ${report.application.stream} ==\n`);
        show(report);
        problem ||= report.shards.some((s) => s.problem);
      }
      return problem;
    };
    if (options.watchSeconds === undefined) return (await showAll()) ? ExitCode.Problem : ExitCode.Ok;
    let stopped = false;
    void io.interrupted().then(() => (stopped = true));
    while (!stopped) {
      try {
        // A watch outlives a ZooKeeper session that expired during an outage: it opens a new one.
        if (!options.json && io.interactive) io.out(CLEAR_SCREEN);
        await showAll();
        if (!options.json) io.out(`\n(every ${options.watchSeconds} s; Ctrl-C to stop)\n`);
      } catch (err) {
        // A ZooKeeper or Kinesis hiccup should not end a watch: say it and try again at the next round.
        io.err(
          `status failed: ${err instanceof ToolError ? err.message : describeError(err)}; trying again in ${options.watchSeconds} s`,
        );
        for (const [i, app] of apps.entries()) {
          if (app && (app.zk.connectionState === 'expired' || app.zk.connectionState === 'closed')) {
            app.close();
            apps[i] = undefined;
          }
        }
      }
      await Promise.race([new Promise((r) => setTimeout(r, options.watchSeconds! * 1000)), io.interrupted()]);
    }
    return ExitCode.Ok;
  } finally {
    for (const app of apps) app?.close();
  }
}
