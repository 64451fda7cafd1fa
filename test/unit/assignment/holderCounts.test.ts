import {
  HolderCountsPublisher,
  leaseCounts,
  ORPHAN_COUNTS_TRUSTED_MS,
  PUBLISH_EVERY_MS,
  publishedCounts,
} from '../../../src/assignment/holderCounts';
import type { Scheduler } from '../../../src/core/scheduler';

describe('leaseCounts', () => {
  test('counts the leases of readable shards by member, every member named', () => {
    const leases = new Map([
      ['s1', 'a'],
      ['s2', 'a'],
      ['s3', 'b'],
      ['s4', 'gone'],
      ['s5', 'a'],
    ]);
    expect(leaseCounts(leases, ['a', 'b', 'c'], ['s1', 's2', 's3', 's4'])).toEqual(
      new Map([
        ['a', 2],
        ['b', 1],
        ['c', 0],
      ]),
    );
  });
});

describe('publishedCounts', () => {
  const counts = new Map([['a', 3]]);
  const now = 1_000_000;
  test('the first member plans from the lease nodes, not from counts', () => {
    expect(publishedCounts('a', ['a', 'b'], { writer: 'a', counts, writtenAt: now }, now)).toBeUndefined();
  });
  test('another member takes the counts the first member wrote, however old', () => {
    expect(publishedCounts('b', ['a', 'b'], { writer: 'a', counts, writtenAt: 0 }, now)).toBe(counts);
  });
  test('counts of a first member that left are trusted a while, then not', () => {
    const orphan = { writer: 'x', counts, writtenAt: now };
    expect(publishedCounts('b', ['a', 'b'], orphan, now + ORPHAN_COUNTS_TRUSTED_MS - 1)).toBe(counts);
    expect(publishedCounts('b', ['a', 'b'], orphan, now + ORPHAN_COUNTS_TRUSTED_MS)).toBeUndefined();
  });
  test('counts a live member other than the first wrote are not trusted (its first member writes none)', () => {
    expect(publishedCounts('c', ['a', 'b', 'c'], { writer: 'b', counts, writtenAt: now }, now)).toBeUndefined();
  });
  test('no counts: every lease node is read', () => {
    expect(publishedCounts('b', ['a', 'b'], undefined, now)).toBeUndefined();
  });
});

/** A clock moved by hand, its timers run in order as it passes them. */
function manualScheduler() {
  let now = 0;
  const timers: { at: number; task: () => void }[] = [];
  const scheduler = {
    now: () => now,
    after: (ms: number, task: () => void) => {
      const timer = { at: now + ms, task };
      timers.push(timer);
      return () => {
        const i = timers.indexOf(timer);
        if (i >= 0) timers.splice(i, 1);
      };
    },
  } as unknown as Scheduler;
  const advance = async (ms: number) => {
    now += ms;
    for (const t of timers.filter((x) => x.at <= now)) {
      timers.splice(timers.indexOf(t), 1);
      t.task();
    }
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { scheduler, advance };
}

describe('HolderCountsPublisher', () => {
  test('writes a change at once, then at most once per interval, the last change always', async () => {
    const { scheduler, advance } = manualScheduler();
    const written: string[] = [];
    const publisher = new HolderCountsPublisher({
      scheduler,
      write: async (counts) => {
        written.push(JSON.stringify([...counts]));
      },
      failed: () => undefined,
    });
    publisher.publish(new Map([['a', 1]]));
    await advance(0);
    publisher.publish(new Map([['a', 2]]));
    publisher.publish(new Map([['a', 3]]));
    await advance(PUBLISH_EVERY_MS / 2);
    expect(written).toEqual(['[["a",1]]']);
    await advance(PUBLISH_EVERY_MS / 2);
    expect(written).toEqual(['[["a",1]]', '[["a",3]]']);
    publisher.publish(new Map([['a', 3]]));
    await advance(PUBLISH_EVERY_MS * 2);
    expect(written).toHaveLength(2);
  });

  test('a failed write is written again at the next publish; reset writes the same counts again', async () => {
    const { scheduler, advance } = manualScheduler();
    let fail = true;
    const written: number[] = [];
    const failures: unknown[] = [];
    const publisher = new HolderCountsPublisher({
      scheduler,
      write: async (counts) => {
        if (fail) throw new Error('connection lost');
        written.push(counts.get('a')!);
      },
      failed: (err) => failures.push(err),
    });
    publisher.publish(new Map([['a', 1]]));
    await advance(0);
    expect(failures).toHaveLength(1);
    fail = false;
    publisher.publish(new Map([['a', 1]]));
    await advance(PUBLISH_EVERY_MS);
    expect(written).toEqual([1]);
    publisher.reset();
    publisher.publish(new Map([['a', 1]]));
    await advance(PUBLISH_EVERY_MS);
    expect(written).toEqual([1, 1]);
  });
});
