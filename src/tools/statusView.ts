/** Pure: the status report (the `--json` shape) and its human table. */
import type { SpoutConfig } from '../config/config';
import { describePosition, type Bootstrap, type Position } from '../core/position';
import { identityMismatch } from '../coordination/streamIdentity';
import type { ShardLag } from './lag';
import type { ApplicationSnapshot } from './snapshot';
import { ShardState, type ShardOwner, type ShardStatus } from './shardStates';

export interface StatusReport {
  v: 1;
  takenAt: string;
  application: {
    name: string;
    stream: string;
    zookeeperPath: string;
    bootstrap: {
      firstStart: string;
      initialPosition: Bootstrap['initialPosition'];
      streamArn: string;
      streamCreated: string;
    };
    /** The stream now is the one the checkpoints belong to (same ARN and creation time). */
    streamMatches: boolean;
    members: {
      memberId: string;
      taskIndex: number | null;
      host: string | null;
      pid: number | null;
      since: string | null;
      leases: number;
      /** Storm's topology id, whether Storm has the task active, whether it gave way to another topology. */
      topology: string | null;
      active: boolean | null;
      standby: boolean | null;
    }[];
    counts: Record<ShardState, number>;
    warnings: string[];
  };
  shards: {
    shardId: string;
    state: ShardState;
    parents: string[];
    waitingOn: string[];
    owner: ShardOwner | null;
    checkpoint: {
      position: Position;
      text: string;
      updatedAt: string | null;
      ageMs: number | null;
      writer: string | null;
    } | null;
    /** Where a shard with no checkpoint yet will start. */
    startsAt: string | null;
    lag: ShardLag | null;
    problem: string | null;
  }[];
}

export function statusReport(
  config: SpoutConfig,
  snapshot: ApplicationSnapshot,
  shards: readonly ShardStatus[],
  lags: ReadonlyMap<string, ShardLag>,
): StatusReport {
  const { bootstrap, identity } = snapshot;
  // The spout's own test, so that status says "refuses" exactly when the spout does.
  const streamMatches = identityMismatch(bootstrap, identity, snapshot.base) === undefined;
  const warnings: string[] = [];
  if (!streamMatches) {
    warnings.push(
      `the stream now (${identity.streamArn}, created ${iso(identity.createdMs)}) is not the one these checkpoints belong to (${bootstrap.streamArn}, created ${iso(bootstrap.streamCreatedMs)}): the spout refuses to read it`,
    );
  }
  for (const shard of shards)
    if (shard.owner && !shard.owner.live)
      warnings.push(
        `${shard.shardId}: leased by ${shard.owner.memberId}, which is not a live member (a process that just died: ZooKeeper drops its lease when its session times out)`,
      );
  const counts = Object.fromEntries(
    Object.values(ShardState).map((state) => [state, shards.filter((s) => s.state === state).length]),
  ) as Record<ShardState, number>;
  return {
    v: 1,
    takenAt: iso(snapshot.takenAtMs),
    application: {
      name: config.applicationName,
      stream: config.streamName ?? config.streamArn ?? identity.streamArn,
      zookeeperPath: snapshot.base,
      bootstrap: {
        firstStart: iso(bootstrap.firstStartMs),
        initialPosition: bootstrap.initialPosition,
        streamArn: bootstrap.streamArn,
        streamCreated: iso(bootstrap.streamCreatedMs),
      },
      streamMatches,
      members: snapshot.members.map((m) => ({
        memberId: m.memberId,
        taskIndex: m.taskIndex ?? null,
        host: m.host ?? null,
        pid: m.pid ?? null,
        since: m.since ?? null,
        leases: shards.filter((s) => s.owner?.memberId === m.memberId).length,
        topology: m.topology ?? null,
        active: m.active ?? null,
        standby: m.standby ?? null,
      })),
      counts,
      warnings,
    },
    shards: shards.map((s) => {
      const updatedMs = s.checkpoint?.updatedAt === undefined ? NaN : Date.parse(s.checkpoint.updatedAt);
      return {
        shardId: s.shardId,
        state: s.state,
        parents: s.parents,
        waitingOn: s.waitingOn,
        owner: s.owner ?? null,
        checkpoint: s.checkpoint
          ? {
              position: s.checkpoint.position,
              text: describePosition(s.checkpoint.position),
              updatedAt: s.checkpoint.updatedAt ?? null,
              ageMs: Number.isNaN(updatedMs) ? null : Math.max(0, snapshot.takenAtMs - updatedMs),
              writer: s.checkpoint.writer ?? null,
            }
          : null,
        startsAt: s.startsAt ? describePosition(s.startsAt) : null,
        lag: lags.get(s.shardId) ?? null,
        problem: s.problem ?? null,
      };
    }),
  };
}

function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms);
}

/** 950 ms → "0.9s", 75 s → "1m15s", 3 h → "3h00m", 2 days → "2d00h". */
export function formatDuration(ms: number): string {
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${pad(Math.floor((s % 86_400) / 3600))}h`;
}

function ownerText(owner: ShardOwner | null): string {
  if (!owner) return '-';
  if (!owner.live) return `${owner.memberId} (gone)`;
  return `task ${owner.taskIndex ?? '?'} ${owner.host ?? '?'}:${owner.pid ?? '?'}`;
}

function lagText(lag: ShardLag | null): string {
  if (!lag) return '-';
  if (lag.error) return `? (${lag.error.slice(0, 60)})`;
  const behind = lag.millisBehindLatest === undefined ? '?' : formatDuration(lag.millisBehindLatest);
  return lag.nextRecordAgeMs === undefined
    ? behind
    : `${behind} (next record ${formatDuration(lag.nextRecordAgeMs)} old)`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function renderStatus(report: StatusReport): string {
  const app = report.application;
  const boot = app.bootstrap;
  const initial =
    typeof boot.initialPosition === 'string' ? boot.initialPosition : `at ${boot.initialPosition.atTimestamp}`;
  const counts = Object.entries(app.counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`)
    .join(', ');
  const lines = [
    `application ${app.name}, stream ${app.stream} (${app.zookeeperPath}) at ${report.takenAt}`,
    `bootstrap: first start ${boot.firstStart}, initial position ${initial}, stream ${boot.streamArn} created ${boot.streamCreated}`,
    `members: ${app.members.length === 0 ? 'none (no spout task is running)' : app.members.map((m) => `task ${m.taskIndex ?? '?'} on ${m.host ?? '?'} pid ${m.pid ?? '?'} (${m.leases} lease(s), since ${m.since ?? '?'}${topologyOf(m)})`).join('; ')}`,
    `shards: ${counts || 'none'}`,
    ...app.warnings.map((w) => `WARNING: ${w}`),
    '',
    table(
      ['SHARD', 'STATE', 'PARENTS', 'OWNER', 'CHECKPOINT', 'CHECKPOINTED', 'BEHIND LATEST'],
      report.shards.map((s) => [
        s.shardId,
        s.state === ShardState.Waiting ? `${s.state} (${s.waitingOn.join(', ')})` : s.state,
        s.parents.join(',') || '-',
        ownerText(s.owner),
        s.checkpoint ? s.checkpoint.text : s.startsAt ? `none yet (starts ${s.startsAt})` : '-',
        s.checkpoint?.ageMs == null ? '-' : `${formatDuration(s.checkpoint.ageMs)} ago`,
        lagText(s.lag),
      ]),
    ),
    ...report.shards.filter((s) => s.problem).map((s) => `PROBLEM ${s.shardId}: ${s.problem}`),
  ];
  return lines.join('\n');
}

/** A member's topology and state, when its node says (a new version deployed beside the running one). */
function topologyOf(m: { topology: string | null; active: boolean | null; standby: boolean | null }): string {
  if (m.topology === null) return '';
  const state = m.standby ? ', on standby' : m.active === false ? ', deactivated' : '';
  return `, topology ${m.topology}${state}`;
}
