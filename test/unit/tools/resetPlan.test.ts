import fc from 'fast-check';
import { startPositions, type Bootstrap, type Position } from '../../../src/core/position';
import type { ShardNode } from '../../../src/core/shard';
import type { CheckpointRecord } from '../../../src/coordination/store';
import type { ResetTarget } from '../../../src/tools/args';
import { ToolError } from '../../../src/tools/exitCodes';
import { planReset, type ResetFacts, type ResetPlan } from '../../../src/tools/resetPlan';

const NOW = Date.parse('2026-12-01T04:00:00Z');
const node = (shardId: string, parents: string[] = [], closed = false): ShardNode => ({ shardId, parents, closed });
const after = (sequenceNumber: string): Position => ({ kind: 'AFTER', sequenceNumber });
const END: Position = { kind: 'SHARD_END' };
const TRIM: Position = { kind: 'TRIM_HORIZON' };

function bootstrap(overrides: Partial<Bootstrap> = {}): Bootstrap {
  return {
    v: 1,
    firstStartMs: NOW - 3_600_000,
    initialPosition: 'TRIM_HORIZON',
    streamArn: 'arn',
    streamCreatedMs: 0,
    shardsAtStart: [],
    openAtStart: [],
    ...overrides,
  };
}

function facts(
  listing: ShardNode[],
  checkpoints: Record<string, Position>,
  options: {
    finished?: string[];
    ended?: string[];
    leases?: Record<string, string>;
    boot?: Bootstrap;
    unreadable?: Record<string, string>;
  } = {},
): ResetFacts {
  return {
    listing,
    checkpoints: new Map(
      Object.entries(checkpoints).map(([id, position], i): [string, CheckpointRecord] => [
        id,
        { position, version: i + 3 },
      ]),
    ),
    unreadable: new Map(Object.entries(options.unreadable ?? {})),
    finished: new Set(options.finished ?? []),
    ended: new Set(options.ended ?? []),
    leases: new Map(Object.entries(options.leases ?? {})),
    startOf: startPositions(options.boot ?? bootstrap()),
  };
}

// A stream split once, read to the end: parent finished, both children read some way.
const split = () =>
  facts(
    [node('p', [], true), node('c1', ['p']), node('c2', ['p'])],
    { p: END, c1: after('11'), c2: after('22') },
    { finished: ['p'] },
  );
const summary = (plan: ResetPlan) =>
  plan.changes.map(
    (c) =>
      `${c.shardId} ${c.to.kind}${c.to.kind === 'AFTER' ? ` ${c.to.sequenceNumber}` : ''}${c.removeFinished ? ' -finished' : ''}`,
  );

describe('planReset', () => {
  it('TRIM_HORIZON: every shard from its start, the finished parent first and unmarked', () => {
    const plan = planReset(split(), { kind: 'TRIM_HORIZON' }, undefined, NOW);
    expect(summary(plan)).toEqual(['p TRIM_HORIZON -finished', 'c1 TRIM_HORIZON', 'c2 TRIM_HORIZON']);
    expect(plan.changes.map((c) => c.checkpointVersion)).toEqual([3, 4, 5]);
  });

  it('a selected parent brings its descendants along; a selected child leaves its parent alone', () => {
    const parent = planReset(split(), { kind: 'TRIM_HORIZON' }, ['p'], NOW);
    expect(summary(parent)).toEqual(['p TRIM_HORIZON -finished', 'c1 TRIM_HORIZON', 'c2 TRIM_HORIZON']);
    expect(parent.changes[1].reason).toBe('descendant of p: read again after it');
    expect(summary(planReset(split(), { kind: 'TRIM_HORIZON' }, ['c2'], NOW))).toEqual(['c2 TRIM_HORIZON']);
  });

  it('LATEST: open and unfinished shards from now; a finished shard stays finished', () => {
    const f = facts(
      [node('p', [], true), node('c1', ['p']), node('q', [], true), node('r')],
      { p: END, c1: after('11'), q: after('5') },
      { finished: ['p'] },
    );
    const plan = planReset(f, { kind: 'LATEST' }, undefined, NOW);
    expect(plan.changes.map((c) => [c.shardId, c.to])).toEqual([
      ['c1', { kind: 'AT_TIMESTAMP', timestampMs: NOW }],
      ['q', { kind: 'AT_TIMESTAMP', timestampMs: NOW }],
      ['r', { kind: 'AT_TIMESTAMP', timestampMs: NOW }],
    ]);
    expect(plan.changes[2]).toMatchObject({ from: undefined, startsAt: TRIM, checkpointVersion: undefined });
    expect(plan.unchanged).toEqual([{ shardId: 'p', why: 'finished: nothing of it is newer than now' }]);
  });

  it('a timestamp: every shard from then, finished ones included (the spout reads them to their end again)', () => {
    const at = NOW - 60_000;
    const plan = planReset(split(), { kind: 'AT_TIMESTAMP', timestampMs: at, text: 'x' }, undefined, NOW);
    expect(plan.changes.map((c) => c.to)).toEqual(Array(3).fill({ kind: 'AT_TIMESTAMP', timestampMs: at }));
    expect(plan.changes[0].removeFinished).toBe(true);
  });

  it('a sequence number: the one shard after it, its descendants from their start', () => {
    const plan = planReset(split(), { kind: 'AFTER', sequenceNumber: '7' }, ['p'], NOW);
    expect(summary(plan)).toEqual(['p AFTER 7 -finished', 'c1 TRIM_HORIZON', 'c2 TRIM_HORIZON']);
  });

  it('leaves alone what is already there, and shards closed before a LATEST first start', () => {
    const boot = bootstrap({ initialPosition: 'LATEST', shardsAtStart: ['old', 'a'], openAtStart: ['a'] });
    const f = facts([node('old', [], true), node('a'), node('b')], { a: TRIM }, { boot });
    const plan = planReset(f, { kind: 'TRIM_HORIZON' }, undefined, NOW);
    expect(plan.changes).toEqual([]);
    expect(plan.unchanged.map((u) => u.shardId)).toEqual(['a', 'b', 'old']);
    expect(plan.unchanged[2].why).toContain("closed before the application's first start with initialPosition LATEST");
  });

  it('moves a checkpoint that stopped inside a KPL aggregate to after the whole record named (not "already there")', () => {
    const inside: Position = { kind: 'AFTER', sequenceNumber: '42', subSequence: 3 };
    const plan = planReset(facts([node('a')], { a: inside }), { kind: 'AFTER', sequenceNumber: '42' }, ['a'], NOW);
    expect(plan.changes.map((c) => [c.from, c.to])).toEqual([[inside, after('42')]]);
  });

  it('removes ended markers too, and reports every lease held', () => {
    const f = facts(
      [node('p', [], true), node('c', ['p'])],
      { p: after('9') },
      { ended: ['p'], leases: { p: 'task0-h-1-abc' } },
    );
    const plan = planReset(f, { kind: 'TRIM_HORIZON' }, ['p'], NOW);
    expect(plan.changes[0]).toMatchObject({ shardId: 'p', removeEnded: true, heldBy: 'task0-h-1-abc' });
    expect(plan.leases).toEqual([{ shardId: 'p', owner: 'task0-h-1-abc' }]);
  });

  it.each<[string, ResetTarget, string[] | undefined, ResetFacts, string]>([
    ['an unknown shard', { kind: 'LATEST' }, ['nope'], split(), 'unknown shard nope; the stream has c1, c2, p'],
    [
      'an expired shard',
      { kind: 'LATEST' },
      ['gone'],
      facts([node('a')], { gone: END }),
      'gone expired from the stream',
    ],
    [
      'a sequence number for every shard',
      { kind: 'AFTER', sequenceNumber: '1' },
      undefined,
      split(),
      'a sequence number belongs to one shard',
    ],
    [
      'a sequence number for two shards',
      { kind: 'AFTER', sequenceNumber: '1' },
      ['c1', 'c2'],
      split(),
      'a sequence number belongs to one shard',
    ],
    [
      'a timestamp in the future',
      { kind: 'AT_TIMESTAMP', timestampMs: NOW + 60_000, text: 'later' },
      undefined,
      split(),
      '--to later: that is in the future',
    ],
    [
      'an unreadable checkpoint',
      { kind: 'TRIM_HORIZON' },
      undefined,
      facts([node('a')], {}, { unreadable: { a: 'no JSON' } }),
      'a: its checkpoint node cannot be read (no JSON)',
    ],
  ])('refuses %s', (_, target, selection, f, message) => {
    expect(() => planReset(f, target, selection, NOW)).toThrow(ToolError);
    expect(() => planReset(f, target, selection, NOW)).toThrow(message);
  });
});

/** A stream grown by splits and merges from a few shards, some of the oldest expired, with state in ZooKeeper. */
const world = fc
  .record({
    initial: fc.integer({ min: 1, max: 3 }),
    /** Shard ids in no particular order (Kinesis's grow; the plan must not rely on it). */
    idOffset: fc.nat(100),
    events: fc.array(fc.record({ merge: fc.boolean(), pick: fc.nat() }), { maxLength: 7 }),
    startAfter: fc.nat(),
    initialPosition: fc.constantFrom<Bootstrap['initialPosition']>('LATEST', 'TRIM_HORIZON', {
      atTimestamp: '2026-11-30T00:00:00Z',
    }),
    expire: fc.nat({ max: 3 }),
    states: fc.array(
      fc.record({
        kind: fc.constantFrom('none', 'trim', 'after', 'end'),
        seq: fc.bigInt({ min: 1n, max: 10n ** 30n }),
        ended: fc.boolean(),
        leased: fc.boolean(),
      }),
      { minLength: 20, maxLength: 20 },
    ),
  })
  .map((w) => {
    const shards: ShardNode[] = [];
    const add = (parents: string[]) =>
      shards.push(node(`s${String((shards.length * 37 + w.idOffset) % 101).padStart(3, '0')}`, parents));
    for (let i = 0; i < w.initial; i += 1) add([]);
    let atStart = { known: shards.map((s) => s.shardId), open: shards.map((s) => s.shardId) };
    const startAfter = w.startAfter % (w.events.length + 1);
    w.events.forEach((event, i) => {
      const open = shards.filter((s) => !s.closed);
      if (event.merge && open.length >= 2) {
        const a = open[event.pick % open.length];
        const b = open[(event.pick + 1) % open.length];
        a.closed = b.closed = true;
        add([a.shardId, b.shardId]);
      } else {
        const p = open[event.pick % open.length];
        p.closed = true;
        add([p.shardId]);
        add([p.shardId]);
      }
      if (i + 1 === startAfter)
        atStart = { known: shards.map((s) => s.shardId), open: shards.filter((s) => !s.closed).map((s) => s.shardId) };
    });
    const expired = new Set(
      shards
        .filter((s) => s.closed)
        .slice(0, w.expire)
        .map((s) => s.shardId),
    );
    const checkpoints: Record<string, Position> = {};
    const finished: string[] = [];
    const ended: string[] = [];
    const leases: Record<string, string> = {};
    shards.forEach((s, i) => {
      const state = w.states[i % w.states.length];
      if (state.kind === 'trim') checkpoints[s.shardId] = TRIM;
      if (state.kind === 'after') checkpoints[s.shardId] = after(String(state.seq));
      if (state.kind === 'end' && s.closed) {
        checkpoints[s.shardId] = END;
        finished.push(s.shardId);
      }
      if (state.ended && s.closed) ended.push(s.shardId);
      if (state.leased && !expired.has(s.shardId)) leases[s.shardId] = `task${i}`;
    });
    const boot = bootstrap({
      initialPosition: w.initialPosition,
      shardsAtStart: atStart.known,
      openAtStart: atStart.open,
    });
    return facts(
      shards.filter((s) => !expired.has(s.shardId)),
      checkpoints,
      { finished, ended, leases, boot },
    );
  });

const target = fc.oneof(
  fc.constant<ResetTarget>({ kind: 'TRIM_HORIZON' }),
  fc.constant<ResetTarget>({ kind: 'LATEST' }),
  fc.constant<ResetTarget>({ kind: 'AT_TIMESTAMP', timestampMs: NOW - 1_000, text: 't' }),
);

/** Every listed shard below `shardId`. */
function descendants(f: ResetFacts, shardId: string): string[] {
  const below = f.listing.filter((s) => s.parents.includes(shardId)).map((s) => s.shardId);
  return [...below, ...below.flatMap((id) => descendants(f, id))];
}

describe('planReset, whatever the stream and its state', () => {
  const selections = (f: ResetFacts) =>
    fc.option(
      fc.subarray(
        f.listing.map((s) => s.shardId),
        { minLength: 1 },
      ),
      { nil: undefined },
    );

  it('keeps parents first: no descendant of a shard read again is left finished or ahead of the target', () => {
    fc.assert(
      fc.property(
        world.chain((f) => fc.tuple(fc.constant(f), target, selections(f))),
        ([f, to, selection]) => {
          const plan = planReset(f, to, selection, NOW);
          const changed = new Map(plan.changes.map((c) => [c.shardId, c]));
          const unchanged = new Map(plan.unchanged.map((u) => [u.shardId, u.why]));
          const positionAfter = (id: string) => changed.get(id)?.to ?? f.checkpoints.get(id)?.position ?? f.startOf(id);
          const finishedAfter = (id: string) =>
            (f.finished.has(id) && !changed.get(id)?.removeFinished) || positionAfter(id).kind === 'SHARD_END';
          for (const change of plan.changes) {
            expect(change.to.kind).not.toBe('SHARD_END');
            expect(finishedAfter(change.shardId)).toBe(false);
            for (const below of descendants(f, change.shardId)) {
              expect(finishedAfter(below)).toBe(false);
              expect(['TRIM_HORIZON', 'AT_TIMESTAMP']).toContain(positionAfter(below).kind);
              expect(changed.has(below) || unchanged.has(below)).toBe(true);
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('writes only listed shards in scope, once each, parents before children, at the versions read', () => {
    fc.assert(
      fc.property(
        world.chain((f) => fc.tuple(fc.constant(f), target, selections(f))),
        ([f, to, selection]) => {
          const plan = planReset(f, to, selection, NOW);
          const listed = new Set(f.listing.map((s) => s.shardId));
          const scope = new Set((selection ?? [...listed]).flatMap((id) => [id, ...descendants(f, id)]));
          const accounted = [...plan.changes.map((c) => c.shardId), ...plan.unchanged.map((u) => u.shardId)];
          expect(accounted.sort()).toEqual([...scope].sort());
          plan.changes.forEach((change, i) => {
            expect(listed.has(change.shardId)).toBe(true);
            expect(change.checkpointVersion).toBe(f.checkpoints.get(change.shardId)?.version);
            expect(change.removeFinished).toBe(f.finished.has(change.shardId));
            expect(change.removeEnded).toBe(f.ended.has(change.shardId));
            for (const later of plan.changes.slice(i + 1))
              expect(descendants(f, later.shardId)).not.toContain(change.shardId);
            if (selection === undefined || selection.includes(change.shardId)) {
              const expected =
                to.kind === 'TRIM_HORIZON'
                  ? TRIM
                  : {
                      kind: 'AT_TIMESTAMP',
                      timestampMs: to.kind === 'LATEST' ? NOW : (to as { timestampMs: number }).timestampMs,
                    };
              expect(change.to).toEqual(expected);
            }
          });
        },
      ),
      { numRuns: 500 },
    );
  });
});
