/** The import's plan (pure): what it writes from an old spout's positions, what it keeps, and the order it keeps. */
import fc from 'fast-check';
import { readableShards } from '../../../src/assignment/readable';
import { importOps } from '../../../src/coordination/importOps';
import { startPositions, type Bootstrap, type Position } from '../../../src/core/position';
import type { ShardNode } from '../../../src/core/shard';
import { planImport, type ImportFacts, type ImportPlan } from '../../../src/tools/importPlan';
import type { ZooKeeper } from '../../../src/coordination/zooKeeper';
import { parseSourceNode, readSourceState, sourcePath } from '../../../src/tools/importSource';

const NOW = Date.parse('2026-12-07T01:30:00Z');
const node = (shardId: string, parents: string[] = [], closed = false): ShardNode => ({ shardId, parents, closed });
const after = (sequenceNumber: string): Position => ({ kind: 'AFTER', sequenceNumber });
const OPTIONS = { overwrite: false, nowMs: NOW, initialPosition: 'LATEST' as const };

function facts(listing: ShardNode[], overrides: Partial<ImportFacts> = {}): ImportFacts {
  return {
    listing,
    checkpoints: new Map(),
    finished: new Set(),
    ended: new Set(),
    leases: new Map(),
    bootstrap: undefined,
    identity: { streamArn: 'arn:aws:kinesis:us-east-1:000000000000:stream/s', createdMs: 1 },
    ...overrides,
  };
}
const source = (positions: Record<string, string>, withoutPosition: string[] = []) => ({
  positions: new Map(Object.entries(positions)),
  withoutPosition: new Set(withoutPosition),
});
const actions = (plan: ImportPlan) => Object.fromEntries(plan.lines.map((l) => [l.shardId, l.action]));

describe('planImport', () => {
  // A split of p into a and b, then a merge of b and c into m: the source read p and c, never the rest.
  const listing = [
    node('p', [], true),
    node('a', ['p']),
    node('b', ['p'], true),
    node('c', [], true),
    node('m', ['b', 'c']),
    node('x'),
  ];

  it('writes AFTER the source position, TRIM_HORIZON for descendants of imported shards, nothing for the rest', () => {
    const plan = planImport(facts(listing), source({ p: '100', c: '200', gone: '5' }, ['x']), OPTIONS);
    expect(plan.lines.map((l) => [l.shardId, l.action, l.to])).toEqual([
      ['p', 'write', after('100')],
      ['a', 'write', { kind: 'TRIM_HORIZON' }],
      ['b', 'write', { kind: 'TRIM_HORIZON' }],
      ['c', 'write', after('200')],
      ['m', 'write', { kind: 'TRIM_HORIZON' }],
      ['x', 'skipped', undefined],
      ['gone', 'skipped', undefined],
    ]);
    expect(plan.lines.find((l) => l.shardId === 'gone')!.why).toContain('expired');
  });

  it('creates the bootstrap as a first start would, leaving the imported shards out of those at start (a closed one is not finished under LATEST)', () => {
    const plan = planImport(facts(listing), source({ p: '100' }), OPTIONS);
    expect(plan.createBootstrap).toMatchObject({
      firstStartMs: NOW,
      initialPosition: 'LATEST',
      shardsAtStart: ['c', 'x'],
      openAtStart: ['x'],
    });
    const startOf = startPositions(plan.createBootstrap!);
    expect(startOf('p').kind).toBe('TRIM_HORIZON');
    expect(startOf('x')).toEqual({ kind: 'AT_TIMESTAMP', timestampMs: NOW });
    expect(planImport(facts(listing, { bootstrap: plan.createBootstrap }), source({}), OPTIONS).createBootstrap).toBe(
      undefined,
    );
  });

  it('says "already imported" on a re-run, keeps a different checkpoint, replaces it only with overwrite, never off SHARD_END', () => {
    const checkpoints = new Map([
      ['p', { position: after('100'), version: 4 }],
      ['c', { position: after('250'), version: 7 }],
      ['a', { position: { kind: 'SHARD_END' } as Position, version: 2 }],
    ]);
    const f = facts(listing, { checkpoints });
    const s = source({ p: '100', c: '200', a: '300' });
    expect(actions(planImport(f, s, OPTIONS))).toMatchObject({ p: 'already imported', c: 'kept', a: 'kept' });
    const overwritten = planImport(f, s, { ...OPTIONS, overwrite: true });
    expect(actions(overwritten)).toMatchObject({ p: 'already imported', c: 'write', a: 'kept' });
    const ended = planImport({ ...f, ended: new Set(['c']) }, s, { ...OPTIONS, overwrite: true });
    expect(ended.lines.find((l) => l.shardId === 'c')).toMatchObject({
      action: 'kept',
      why: expect.stringContaining('ended'),
    });
    expect(overwritten.lines.find((l) => l.shardId === 'c')).toMatchObject({
      to: after('200'),
      existing: { version: 7 },
    });
  });

  it('names the leases held', () => {
    const plan = planImport(facts(listing, { leases: new Map([['x', 'task0-h-1-0x1']]) }), source({}), OPTIONS);
    expect(plan.leases).toEqual([{ shardId: 'x', owner: 'task0-h-1-0x1' }]);
  });

  it('as transaction ops: bootstrap created, each checkpoint created or set at its version, each lease taken and given back', () => {
    const ops = importOps(
      '/r/app/s',
      { v: 1 } as Bootstrap,
      [
        { shardId: 'p', position: after('1'), checkpointVersion: undefined },
        { shardId: 'c', position: after('2'), checkpointVersion: 7 },
      ],
      'tool-h-1',
    );
    expect(ops.map((o) => [o.op, o.path, 'version' in o ? o.version : undefined])).toEqual([
      ['create', '/r/app/s/bootstrap', undefined],
      ['create', '/r/app/s/leases/p', undefined],
      ['create', '/r/app/s/checkpoints/p', undefined],
      ['remove', '/r/app/s/leases/p', 0],
      ['create', '/r/app/s/leases/c', undefined],
      ['set', '/r/app/s/checkpoints/c', 7],
      ['remove', '/r/app/s/leases/c', 0],
    ]);
  });
});

describe('the sources as their code writes them', () => {
  it('builds each source path', () => {
    expect(sourcePath({ from: 'awslabs-storm-spout', root: 'kinesis_storm_spout', topology: 't', stream: 's' })).toBe(
      '/kinesis_storm_spout/t/s',
    );
    expect(sourcePath({ from: 'storm-kinesis', root: 'committed', stream: 's' })).toBe('/committed/s');
    expect(sourcePath({ from: 'storm-kinesis', root: '/a/b/', stream: 's' })).toBe('/a/b/s');
  });

  it('reads each node format, and nothing else', () => {
    const seq = '49590338271490256608559692538361571095921575989136588898';
    expect(parseSourceNode('awslabs-storm-spout', Buffer.from(`{"checkpoint":"${seq}"}`))).toBe(seq);
    expect(parseSourceNode('awslabs-storm-spout', Buffer.from('{"checkpoint":""}'))).toBeUndefined();
    expect(parseSourceNode('storm-kinesis', Buffer.from(`{"committedSequenceNumber":"${seq}"}`))).toBe(seq);
    expect(() => parseSourceNode('storm-kinesis', Buffer.from(`{"checkpoint":"${seq}"}`))).toThrow(
      'expected {"committedSequenceNumber":"<sequence number>"}',
    );
    expect(() => parseSourceNode('awslabs-storm-spout', Buffer.from('49590338'))).toThrow('expected');
    expect(() => parseSourceNode('awslabs-storm-spout', Buffer.from('{'))).toThrow('not JSON');
  });
});

/** A stream grown by splits and merges, some shards expired, a source with positions, this application's state. */
const world = fc
  .record({
    initial: fc.integer({ min: 1, max: 3 }),
    events: fc.array(fc.record({ merge: fc.boolean(), pick: fc.nat() }), { maxLength: 6 }),
    expire: fc.nat({ max: 2 }),
    states: fc.array(
      fc.record({
        source: fc.constantFrom('none', 'position', 'empty'),
        here: fc.constantFrom('none', 'same', 'other', 'end'),
        seq: fc.bigInt({ min: 1n, max: 10n ** 30n }),
        ended: fc.boolean(),
      }),
      { minLength: 16, maxLength: 16 },
    ),
    bootstrapped: fc.boolean(),
    overwrite: fc.boolean(),
  })
  .map((w) => {
    const shards: ShardNode[] = [];
    const add = (parents: string[]) => shards.push(node(`s${String(shards.length).padStart(3, '0')}`, parents));
    for (let i = 0; i < w.initial; i += 1) add([]);
    for (const event of w.events) {
      const open = shards.filter((s) => !s.closed);
      if (event.merge && open.length >= 2) {
        const [a, b] = [open[event.pick % open.length], open[(event.pick + 1) % open.length]];
        a.closed = b.closed = true;
        add([a.shardId, b.shardId]);
      } else {
        const p = open[event.pick % open.length];
        p.closed = true;
        add([p.shardId]);
        add([p.shardId]);
      }
    }
    const expired = new Set(
      shards
        .filter((s) => s.closed)
        .slice(0, w.expire)
        .map((s) => s.shardId),
    );
    const positions: Record<string, string> = {};
    const empty: string[] = [];
    const checkpoints = new Map<string, { position: Position; version: number }>();
    const finished = new Set<string>();
    const ended = new Set<string>();
    shards.forEach((s, i) => {
      const state = w.states[i % w.states.length];
      if (state.source === 'position') positions[s.shardId] = String(state.seq);
      if (state.source === 'empty') empty.push(s.shardId);
      if (expired.has(s.shardId)) return;
      if (state.here === 'same' && state.source === 'position')
        checkpoints.set(s.shardId, { position: after(String(state.seq)), version: i });
      if (state.here === 'other') checkpoints.set(s.shardId, { position: after(String(state.seq + 7n)), version: i });
      if (state.here === 'end' && s.closed) {
        checkpoints.set(s.shardId, { position: { kind: 'SHARD_END' }, version: i });
        finished.add(s.shardId);
      }
      if (state.ended && s.closed) ended.add(s.shardId);
    });
    const listing = shards.filter((s) => !expired.has(s.shardId));
    const f = facts(listing, {
      checkpoints,
      finished,
      ended,
      bootstrap: w.bootstrapped
        ? ({
            v: 1,
            firstStartMs: NOW - 1,
            initialPosition: 'TRIM_HORIZON',
            streamArn: 'a',
            streamCreatedMs: 1,
            shardsAtStart: [],
            openAtStart: [],
          } as Bootstrap)
        : undefined,
    });
    return { facts: f, source: source(positions, empty), overwrite: w.overwrite };
  });

describe('planImport, for any stream history and state', () => {
  it('never moves a checkpoint this application has without --overwrite, and never off SHARD_END', () => {
    fc.assert(
      fc.property(world, (w) => {
        const plan = planImport(w.facts, w.source, { ...OPTIONS, overwrite: w.overwrite });
        for (const line of plan.lines.filter((l) => l.action === 'write')) {
          const existing = w.facts.checkpoints.get(line.shardId);
          if (existing) {
            expect(w.overwrite).toBe(true);
            expect(existing.position.kind).not.toBe('SHARD_END');
            expect(w.facts.ended.has(line.shardId)).toBe(false);
            expect(line.existing?.version).toBe(existing.version);
          }
        }
      }),
    );
  });

  it('keeps parents first: nothing is finished by the import, so what the spout may read first is unchanged', () => {
    fc.assert(
      fc.property(world, (w) => {
        const plan = planImport(w.facts, w.source, { ...OPTIONS, overwrite: w.overwrite });
        expect(plan.lines.some((l) => l.to?.kind === 'SHARD_END' && l.action === 'write')).toBe(false);
        const finishedAfter = (id: string) =>
          w.facts.finished.has(id) || w.facts.checkpoints.get(id)?.position.kind === 'SHARD_END';
        const readableBefore = readableShards(w.facts.listing, (id) => w.facts.finished.has(id));
        expect(readableShards(w.facts.listing, finishedAfter)).toEqual(readableBefore);
        // Listed parents come before their children in the plan.
        const listed = new Set(w.facts.listing.map((s) => s.shardId));
        const index = new Map(plan.lines.map((l, i) => [l.shardId, i]));
        for (const shard of w.facts.listing)
          for (const parent of shard.parents)
            if (listed.has(parent) && index.has(shard.shardId) && index.has(parent))
              expect(index.get(parent)!).toBeLessThan(index.get(shard.shardId)!);
      }),
    );
  });

  it('accounts for every shard of the source exactly once, and writes only listed shards', () => {
    fc.assert(
      fc.property(world, (w) => {
        const plan = planImport(w.facts, w.source, { ...OPTIONS, overwrite: w.overwrite });
        const counts = new Map<string, number>();
        for (const l of plan.lines) counts.set(l.shardId, (counts.get(l.shardId) ?? 0) + 1);
        for (const id of [...w.source.positions.keys(), ...w.source.withoutPosition]) expect(counts.get(id)).toBe(1);
        expect([...counts.values()].every((n) => n === 1)).toBe(true);
        const listed = new Set(w.facts.listing.map((s) => s.shardId));
        for (const l of plan.lines) {
          if (l.action === 'write') expect(listed.has(l.shardId)).toBe(true);
          const seq = w.source.positions.get(l.shardId);
          if (l.action === 'write' && seq !== undefined) expect(l.to).toEqual(after(seq));
        }
        // Re-running after the write changes nothing.
        const checkpoints = new Map(w.facts.checkpoints);
        for (const l of plan.lines.filter((x) => x.action === 'write'))
          checkpoints.set(l.shardId, { position: l.to!, version: 99 });
        const again = planImport(
          { ...w.facts, checkpoints, bootstrap: w.facts.bootstrap ?? plan.createBootstrap },
          w.source,
          { ...OPTIONS, overwrite: w.overwrite },
        );
        expect(again.lines.filter((l) => l.action === 'write')).toEqual([]);
        expect(again.createBootstrap).toBeUndefined();
      }),
    );
  });
});

describe('readSourceState', () => {
  /** The nodes of a source as paths to contents: enough of ZooKeeper for a reader of it. */
  function zooKeeper(nodes: Record<string, string>) {
    const data = (path: string) => (path in nodes ? { data: Buffer.from(nodes[path]), version: 0 } : undefined);
    return {
      getData: async (path: string) =>
        data(path) ??
        (Object.keys(nodes).some((p) => p.startsWith(`${path}/`)) ? { data: Buffer.alloc(0), version: 0 } : undefined),
      getChildren: async (path: string) => [
        ...new Set(
          Object.keys(nodes)
            .filter((p) => p.startsWith(`${path}/`))
            .map((p) => p.slice(path.length + 1).split('/')[0]),
        ),
      ],
    } as unknown as ZooKeeper;
  }
  const where = { from: 'awslabs-storm-spout', root: 'kinesis_storm_spout', topology: 't', stream: 's' } as const;

  it('reads the awslabs layout: positions, a shard with an empty checkpoint, the shardList of a live topology', async () => {
    const state = await readSourceState(
      zooKeeper({
        '/kinesis_storm_spout/t/s/shardList': '{"shardList":["shardId-000000000000","shardId-000000000001"]}',
        '/kinesis_storm_spout/t/s/shardId-000000000000/state': '{"checkpoint":"123"}',
        '/kinesis_storm_spout/t/s/shardId-000000000001/state': '{"checkpoint":""}',
      }),
      where,
    );
    expect(state).toMatchObject({
      path: '/kinesis_storm_spout/t/s',
      positions: new Map([['shardId-000000000000', '123']]),
      withoutPosition: new Set(['shardId-000000000001']),
      unreadable: new Map(),
    });
    expect(state!.notes[0]).toContain('/kinesis_storm_spout/t/s/shardList exists');
  });

  it('names a node it cannot read, and says when there is no state at all', async () => {
    const state = await readSourceState(zooKeeper({ '/c/s/shardId-000000000000': '{"committedSequenceNumber":12}' }), {
      from: 'storm-kinesis',
      root: 'c',
      stream: 's',
    });
    expect(state!.unreadable.get('shardId-000000000000')).toContain('/c/s/shardId-000000000000: expected');
    expect(await readSourceState(zooKeeper({}), where)).toBeUndefined();
  });
});
