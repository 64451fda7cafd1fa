import { startPositions, type Bootstrap, type Position } from '../../../src/core/position';
import type { ShardNode } from '../../../src/core/shard';
import { UNREADABLE_LEASE } from '../../../src/coordination/store';
import { shardStatuses } from '../../../src/tools/shardStates';
import type { ApplicationSnapshot } from '../../../src/tools/snapshot';
import { formatDuration, renderStatus, statusReport } from '../../../src/tools/statusView';
import { validateConfig } from '../../../src/config/config';

const NOW = Date.parse('2026-12-01T04:00:00Z');
const node = (shardId: string, parents: string[] = [], closed = false): ShardNode => ({ shardId, parents, closed });

function snapshot(
  listing: ShardNode[],
  checkpoints: Record<string, Position>,
  options: Partial<Pick<ApplicationSnapshot, 'finished' | 'ended' | 'leases' | 'members' | 'unreadable'>> & {
    boot?: Partial<Bootstrap>;
  } = {},
): ApplicationSnapshot {
  const bootstrap: Bootstrap = {
    v: 1,
    firstStartMs: NOW - 86_400_000,
    initialPosition: 'TRIM_HORIZON',
    streamArn: 'arn:s',
    streamCreatedMs: 1,
    shardsAtStart: [],
    openAtStart: [],
    ...options.boot,
  };
  return {
    base: '/k/app/s',
    bootstrap,
    identity: { streamArn: 'arn:s', createdMs: 1 },
    listing,
    checkpoints: new Map(
      Object.entries(checkpoints).map(([id, position]) => [
        id,
        { position, version: 1, updatedAt: new Date(NOW - 90_000).toISOString(), writer: 'task0' },
      ]),
    ),
    unreadable: options.unreadable ?? new Map(),
    finished: options.finished ?? new Set(),
    ended: options.ended ?? new Set(),
    leases: options.leases ?? new Map(),
    members: options.members ?? [],
    startOf: startPositions(bootstrap),
    takenAtMs: NOW,
  };
}

const config = validateConfig({
  streamName: 's',
  region: 'us-east-1',
  applicationName: 'app',
  zookeeper: { connect: 'z:2181' },
});

describe('shardStatuses', () => {
  const graph = [node('p', [], true), node('c1', ['p']), node('c2', ['p']), node('q', [], true)];

  it('names each state: finished, closed, open, waiting on parents, expired', () => {
    const snap = snapshot(
      graph,
      {
        p: { kind: 'SHARD_END' },
        q: { kind: 'AFTER', sequenceNumber: '5' },
        gone: { kind: 'AFTER', sequenceNumber: '1' },
      },
      { finished: new Set(['p']) },
    );
    const states = Object.fromEntries(shardStatuses(snap, 'parents-acked').map((s) => [s.shardId, s.state]));
    expect(states).toEqual({ p: 'finished', c1: 'open', c2: 'open', q: 'closed', gone: 'expired' });
    const waiting = shardStatuses(snapshot(graph, {}), 'parents-acked').find((s) => s.shardId === 'c1')!;
    expect(waiting).toMatchObject({
      state: 'waiting on parents',
      waitingOn: ['p'],
      startsAt: { kind: 'TRIM_HORIZON' },
    });
  });

  it('follows the ordering: an ended parent lets children be read with parents-emitted, none never waits', () => {
    const snap = snapshot(graph, {}, { ended: new Set(['p']) });
    expect(shardStatuses(snap, 'parents-acked').find((s) => s.shardId === 'c1')!.state).toBe('waiting on parents');
    expect(shardStatuses(snap, 'parents-emitted').find((s) => s.shardId === 'c1')!.state).toBe('open');
    expect(shardStatuses(snapshot(graph, {}), 'none').find((s) => s.shardId === 'c1')!.state).toBe('open');
  });

  it('counts shards closed before a LATEST first start as finished, as the spout does', () => {
    const snap = snapshot(
      graph,
      {},
      { boot: { initialPosition: 'LATEST', shardsAtStart: ['p', 'q'], openAtStart: [] } },
    );
    expect(shardStatuses(snap, 'parents-acked').find((s) => s.shardId === 'p')!.state).toBe('finished');
  });

  it('names owners from the members, and says when a lease holder is not a live member or a node cannot be read', () => {
    const members = [{ memberId: 'task3-h-7-ab', taskIndex: 3, host: 'h', pid: 7 }];
    const leases = new Map([
      ['c1', 'task3-h-7-ab'],
      ['c2', 'task9-x-1-cd'],
      ['q', UNREADABLE_LEASE],
    ]);
    const statuses = shardStatuses(snapshot(graph, {}, { leases, members, finished: new Set(['p']) }), 'parents-acked');
    const by = (id: string) => statuses.find((s) => s.shardId === id)!;
    expect(by('c1').owner).toEqual({ memberId: 'task3-h-7-ab', taskIndex: 3, host: 'h', pid: 7, live: true });
    expect(by('c2').owner).toEqual({ memberId: 'task9-x-1-cd', live: false });
    expect(by('q')).toMatchObject({
      owner: undefined,
      problem: expect.stringContaining('lease node of q cannot be read'),
    });
  });
});

describe('status report', () => {
  it('has the documented JSON shape and a table, with checkpoint age and lag', () => {
    const snap = snapshot(
      [node('a')],
      { a: { kind: 'AFTER', sequenceNumber: '42' } },
      {
        leases: new Map([['a', 'm']]),
        members: [
          { memberId: 'm', taskIndex: 0, host: 'h', pid: 9, since: 'x' },
          {
            memberId: 'o',
            taskIndex: 1,
            host: 'h',
            pid: 8,
            since: 'y',
            topology: 'old-1-1',
            active: true,
            standby: true,
          },
        ],
      },
    );
    const report = statusReport(
      config,
      snap,
      shardStatuses(snap, 'parents-acked'),
      new Map([['a', { millisBehindLatest: 125_000, nextRecordAgeMs: 3_000 }]]),
    );
    expect(report.shards[0]).toEqual({
      shardId: 'a',
      state: 'open',
      parents: [],
      waitingOn: [],
      owner: { memberId: 'm', taskIndex: 0, host: 'h', pid: 9, live: true },
      checkpoint: {
        position: { kind: 'AFTER', sequenceNumber: '42' },
        text: 'after 42',
        updatedAt: new Date(NOW - 90_000).toISOString(),
        ageMs: 90_000,
        writer: 'task0',
      },
      startsAt: null,
      lag: { millisBehindLatest: 125_000, nextRecordAgeMs: 3_000 },
      problem: null,
    });
    expect(report.application.members).toEqual([
      {
        memberId: 'm',
        taskIndex: 0,
        host: 'h',
        pid: 9,
        since: 'x',
        leases: 1,
        topology: null,
        active: null,
        standby: null,
      },
      {
        memberId: 'o',
        taskIndex: 1,
        host: 'h',
        pid: 8,
        since: 'y',
        leases: 0,
        topology: 'old-1-1',
        active: true,
        standby: true,
      },
    ]);
    expect(report.application.streamMatches).toBe(true);
    const table = renderStatus(report);
    expect(table).toContain(
      'a      open   -        task 0 h:9  after 42    1m30s ago     2m05s (next record 3.0s old)',
    );
    expect(table).toContain('task 1 on h pid 8 (0 lease(s), since y, topology old-1-1, on standby)');
    expect(table).toContain('task 0 on h pid 9 (1 lease(s), since x)');
  });

  it('warns when the stream is not the one the checkpoints belong to', () => {
    const snap = { ...snapshot([node('a')], {}), identity: { streamArn: 'arn:s', createdMs: 2 } };
    const report = statusReport(config, snap, shardStatuses(snap, 'parents-acked'), new Map());
    expect(report.application.streamMatches).toBe(false);
    expect(renderStatus(report)).toContain('WARNING: the stream now (arn:s, created');
  });

  it.each([
    [950, '0.9s'],
    [75_000, '1m15s'],
    [3 * 3_600_000, '3h00m'],
    [2 * 86_400_000 + 3_600_000, '2d01h'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
