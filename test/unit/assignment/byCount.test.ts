import fc from 'fast-check';
import {
  idealPlacement,
  NOT_JOINED_PREFIX,
  placementKey,
  planLeases,
  shareTargets,
  withNotJoined,
} from '../../../src/assignment/byCount';
import { memberIdOf, taskIndexOf } from '../../../src/coordination/layout';
import { startPositions, type Bootstrap } from '../../../src/core/position';

describe('shareTargets', () => {
  it('gives the extra shares to declared tasks not joined yet, so that early tasks keep what they take', () => {
    const waiting = (i: number) => `${NOT_JOINED_PREFIX}${i}`;
    // 4 shards, 3 declared tasks, joining one after another: nobody ever holds more than it keeps.
    expect(shareTargets(['task1', waiting(0), waiting(1)], new Map(), 4).get('task1')).toBe(1);
    const two = shareTargets(['task0', 'task1', waiting(0)], new Map([['task1', 1]]), 4);
    expect([two.get('task0'), two.get('task1'), two.get(waiting(0))]).toEqual([1, 1, 2]);
    const all = shareTargets(
      ['task0', 'task1', 'task2'],
      new Map([
        ['task0', 1],
        ['task1', 1],
      ]),
      4,
    );
    expect([...all.values()].reduce((a, b) => a + b)).toBe(4);
    expect(all.get('task0')! >= 1 && all.get('task1')! >= 1).toBe(true);
  });

  it('spreads shards within one of each other, extras to the members holding most', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }),
        fc.nat(100),
        fc.array(fc.nat(20)),
        (members, total, holdings) => {
          const held = new Map(members.map((m, i) => [m, holdings[i] ?? 0]));
          const targets = shareTargets(members, held, total);
          const values = members.map((m) => targets.get(m)!);
          expect(values.reduce((a, b) => a + b, 0)).toBe(total);
          expect(Math.max(...values) - Math.min(...values)).toBeLessThanOrEqual(1);
          for (const a of members)
            for (const b of members)
              if (held.get(a)! > held.get(b)!) expect(targets.get(a)!).toBeGreaterThanOrEqual(targets.get(b)!);
        },
      ),
    );
  });
});

/** Runs members' plans in turns, as tasks would against ZooKeeper, until nobody wants to change anything. */
function settle(
  shards: string[],
  members: string[],
  leases = new Map<string, string>(),
  order = members,
): { leases: Map<string, string>; moves: number } {
  let moves = 0;
  for (let round = 0; round < 50; round += 1) {
    let changed = false;
    for (const me of order) {
      const plan = planLeases({ readable: shards, leases, members, me });
      for (const s of plan.release) {
        leases.delete(s);
        moves += 1;
        changed = true;
      }
      for (const s of plan.candidates.slice(0, plan.want)) {
        leases.set(s, me);
        changed = true;
      }
    }
    if (!changed) return { leases, moves };
  }
  throw new Error('lease plans did not settle');
}

describe('planLeases', () => {
  it('converges to one owner per shard, balanced within one, with every shard read', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 5 }),
        (n, m, shift) => {
          const shards = Array.from({ length: n }, (_, i) => `shardId-${i}`);
          const members = Array.from({ length: m }, (_, i) => `task${i}`);
          const order = [...members.slice(shift % m), ...members.slice(0, shift % m)];
          const { leases } = settle(shards, members, new Map(), order);
          expect([...leases.keys()].sort()).toEqual([...shards].sort());
          const counts = members.map((me) => [...leases.values()].filter((o) => o === me).length);
          expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  it('moves few leases when a member joins: only what the newcomer is owed', () => {
    const shards = Array.from({ length: 12 }, (_, i) => `s${i}`);
    const { leases } = settle(shards, ['a', 'b']);
    const { moves } = settle(shards, ['a', 'b', 'c'], leases);
    expect(moves).toBe(4);
  });

  it('tasks starting together, some not joined yet, each try their own share first: disjoint, covering every shard (no create races)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 80 }),
        fc.integer({ min: 0, max: 12 }),
        (m, extra, joinedBits) => {
          // Tasks 0..m-1; the joined ones under their member names, the others still placeholders.
          const joined = (i: number) => ((joinedBits >> i) & 1) === 1 || i === 0;
          const name = (i: number) =>
            joined(i) ? memberIdOf(i, 'host', 100 + i, `0x${i}f`) : `${NOT_JOINED_PREFIX}${i}`;
          const members = Array.from({ length: m }, (_, i) => name(i));
          const shards = Array.from({ length: m + extra }, (_, i) => `shardId-${String(i * 3).padStart(12, '0')}`);
          const tried = new Map<string, string>();
          for (let i = 0; i < m; i += 1) {
            if (!joined(i)) continue;
            const me = name(i);
            const plan = planLeases({ readable: shards, leases: new Map(), members, me });
            expect(plan.candidates).toHaveLength(shards.length);
            // Its first `want` candidates are tried by no other task first.
            for (const shardId of plan.candidates.slice(0, plan.want)) {
              expect(tried.get(shardId)).toBeUndefined();
              tried.set(shardId, me);
            }
            // The same view once every task has joined: the same first choices (joining moves nothing), only
            // as many more as the extra shares, which go to the tasks not joined first, now come to it.
            const all = Array.from({ length: m }, (_, j) => memberIdOf(j, 'host', 100 + j, `0x${j}f`));
            const later = planLeases({ readable: shards, leases: new Map(), members: all, me });
            const shorter = Math.min(plan.want, later.want);
            expect(later.candidates.slice(0, shorter)).toEqual(plan.candidates.slice(0, shorter));
          }
          const joinedCount = members.filter((_, i) => joined(i)).length;
          if (joinedCount === m) expect(tried.size).toBe(shards.length);
        },
      ),
    );
  });

  it('the tasks not joined yet are named by the indexes no member holds', () => {
    const members = ['task2-h-1-0x1', 'task0-h-2-0x2'];
    expect(withNotJoined(members, 5)).toEqual([...members, ...[1, 3, 4].map((i) => `${NOT_JOINED_PREFIX}${i}`)]);
    expect(withNotJoined(members, 2)).toEqual(members);
    // A stale member of the same index (a session not expired yet) leaves a seat to the next free index.
    expect(withNotJoined(['task0-h-1-0x1', 'task0-h-1-0x9'], 3)).toEqual([
      'task0-h-1-0x1',
      'task0-h-1-0x9',
      `${NOT_JOINED_PREFIX}1`,
    ]);
  });

  it('seats: a task keeps its index before and after it joins; other names are their own seat', () => {
    expect(placementKey(`${NOT_JOINED_PREFIX}7`)).toBe('task7');
    // The name a joining task registers under (joining.ts) carries its index.
    expect(placementKey(memberIdOf(7, 'ip-10-0-0-1.ec2.internal', 1234, '0x1a2b'))).toBe('task7');
    expect(taskIndexOf(memberIdOf(12, 'host-3', 99, '0x5'))).toBe(12);
    expect(placementKey('a')).toBe('a');
    const shards = Array.from({ length: 10 }, (_, i) => `s${i}`);
    const placement = idealPlacement(shards, ['task0', 'task1', 'task2']);
    const counts = [...placement.values()].reduce((c, seat) => c.set(seat, (c.get(seat) ?? 0) + 1), new Map());
    expect(counts).toEqual(
      new Map(
        [
          ['task0', 4],
          ['task1', 3],
          ['task2', 3],
        ].filter(([, n]) => n) as [string, number][],
      ),
    );
  });

  it('a member never releases below its share', () => {
    const leases = new Map([
      ['s0', 'a'],
      ['s1', 'a'],
      ['s2', 'b'],
    ]);
    expect(planLeases({ readable: ['s0', 's1', 's2'], leases, members: ['a', 'b'], me: 'a' }).release).toEqual([]);
  });
});

describe('startPositions', () => {
  const boot = (initialPosition: Bootstrap['initialPosition']): Bootstrap => ({
    v: 1,
    firstStartMs: 1_000,
    initialPosition,
    streamArn: 'arn',
    streamCreatedMs: 0,
    shardsAtStart: ['old', 'open'],
    openAtStart: ['open'],
  });
  const decide = (id: string, b: Bootstrap) => startPositions(b)(id);

  it('LATEST is the recorded first start for open shards; closed ones were finished before it', () => {
    expect(decide('open', boot('LATEST'))).toEqual({ kind: 'AT_TIMESTAMP', timestampMs: 1_000 });
    expect(decide('old', boot('LATEST'))).toEqual({ kind: 'SHARD_END' });
  });

  it('shards born after the first start begin at TRIM_HORIZON whatever the initial position', () => {
    for (const p of ['LATEST', 'TRIM_HORIZON', { atTimestamp: '2020-01-01T00:00:00Z' }] as const)
      expect(decide('child', boot(p))).toEqual({ kind: 'TRIM_HORIZON' });
  });

  it('TRIM_HORIZON and timestamps apply to every shard retained at the first start', () => {
    expect(decide('old', boot('TRIM_HORIZON'))).toEqual({ kind: 'TRIM_HORIZON' });
    expect(decide('old', boot({ atTimestamp: '2020-01-01T00:00:00Z' }))).toEqual({
      kind: 'AT_TIMESTAMP',
      timestampMs: Date.parse('2020-01-01T00:00:00Z'),
    });
  });
});

describe('shareTargets rotation (several streams in one process)', () => {
  it('among equals, each stream gives its extra share to a different member; unequal holdings still decide first', () => {
    const members = ['task0-h-1-a', 'task1-h-2-b'];
    const none = new Map<string, number>();
    const extraOf = (rotation: number) =>
      [...shareTargets(members, none, 1, rotation)].filter(([, n]) => n === 1).map(([m]) => m);
    expect(extraOf(0)).toEqual(['task0-h-1-a']);
    expect(extraOf(1)).toEqual(['task1-h-2-b']);
    expect(extraOf(2)).toEqual(['task0-h-1-a']);
    // Three one-shard streams on two tasks: two and one, not three and none.
    const totals = [0, 1, 2].flatMap(extraOf);
    expect(totals.filter((m) => m === 'task0-h-1-a')).toHaveLength(2);
    // Whoever holds the shard keeps it: no move for the sake of the rotation.
    expect(shareTargets(members, new Map([['task0-h-1-a', 1]]), 1, 1).get('task0-h-1-a')).toBe(1);
  });
});
