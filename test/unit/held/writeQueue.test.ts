import { WriteQueue } from '../../../src/held/writeQueue';

const tick = () => new Promise((r) => setImmediate(r));

describe('WriteQueue', () => {
  it('runs writes one at a time, in order, and a failed one does not stop the next', async () => {
    const queue = new WriteQueue();
    const order: string[] = [];
    let running = 0;
    const write =
      (name: string, fail = false) =>
      async () => {
        running += 1;
        expect(running).toBe(1);
        await tick();
        order.push(name);
        running -= 1;
        if (fail) throw new Error(name);
      };
    const a = queue.run(write('a'));
    const b = queue.run(write('b', true));
    const c = queue.run(write('c'));
    await a;
    await expect(b).rejects.toThrow('b');
    await c;
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('a release queued while a flush runs starts after it, and sees its result', async () => {
    const queue = new WriteQueue();
    let stored = 0;
    let acked = 5;
    const flush = queue.coalesce(async () => {
      const next = acked;
      await tick();
      stored = next;
    });
    await Promise.resolve(); // the flush has started and read what to write
    acked = 9;
    const release = queue.run(async () => stored);
    await flush;
    expect(await release).toBe(5);
    await queue.coalesce(async () => {
      stored = acked;
    });
    expect(stored).toBe(9);
  });

  it('asks while a coalesced write waits join it', async () => {
    const queue = new WriteQueue();
    let writes = 0;
    const blocker = queue.run(() => tick());
    const first = queue.coalesce(async () => {
      writes += 1;
    });
    const second = queue.coalesce(async () => {
      writes += 1;
    });
    expect(second).toBe(first);
    await Promise.all([blocker, first, second]);
    expect(writes).toBe(1);
  });
});
