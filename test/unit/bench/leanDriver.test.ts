/** The lean driver's reading of frames and its split of a run into phases (bench/driver). */
import fc from 'fast-check';
import { emitId, FrameScanner } from '../../../bench/driver/frameScanner';
import { splitPhases } from '../../../bench/driver/phases';

const emit = (id: string, needTaskIds = false) =>
  `${JSON.stringify({ command: 'emit', id, tuple: ['k', 'v"id":"x"'], ...(needTaskIds ? {} : { need_task_ids: false }) })}\nend\n`;
const SYNC = '{"command":"sync"}\nend\n';

describe('FrameScanner', () => {
  it('finds every emit id and the sync however the reply is cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z0-9:-]{1,30}$/), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (ids, cuts) => {
          const reply = `{"command":"log","msg":"hi","level":2}\nend\n${ids.map((id) => emit(id)).join('')}${SYNC}`;
          const points = [...new Set(cuts.map((c) => c % (reply.length + 1)))].sort((a, b) => a - b);
          const scanner = new FrameScanner();
          const found: string[] = [];
          let synced = 0;
          let last = 0;
          for (const p of [...points, reply.length]) {
            if (scanner.push(reply.slice(last, p), found).synced) synced += 1;
            last = p;
          }
          expect(found.map((raw) => JSON.parse(raw))).toEqual(ids);
          expect(synced).toBe(1);
        },
      ),
    );
  });

  it('counts the emits that want task ids (storm.js), and refuses two syncs or an emit in reply to an ack', () => {
    expect(new FrameScanner().push(emit('a', true) + emit('b') + SYNC, []).taskIdReplies).toBe(1);
    expect(() => new FrameScanner().push(SYNC + SYNC, [])).toThrow(/two syncs/);
    expect(() => new FrameScanner().push(emit('a') + SYNC, undefined)).toThrow(/in reply to an ack/);
    expect(new FrameScanner().push('{"pid":1234}\nend\n', undefined).pid).toBe(1234);
  });

  it('takes the id whether it comes before the tuple (the spout) or after it (storm.js)', () => {
    expect(emitId('{"command":"emit","id":"s:1","tuple":["\\"id\\":\\"no\\""]}')).toBe('"s:1"');
    // A tuple of parsed JSON (dataFormat json) may hold an "id" key of its own.
    expect(emitId('{"command":"emit","tuple":[{"id":"no"}],"id":"s:2"}')).toBe('"s:2"');
    expect(emitId('{"command":"emit","tuple":[1],"id":42}')).toBe('42');
  });
});

describe('splitPhases', () => {
  it('tells a fast phase from a slow one, with the share of time in each', () => {
    const { fast, slow } = splitPhases([...Array(30).fill(60_000), ...Array(10).fill(10_000)]);
    expect(fast).toEqual({ tuplesPerSecond: 60_000, share: 0.75 });
    expect(slow).toEqual({ tuplesPerSecond: 10_000, share: 0.25 });
  });

  it('a steady run is one phase, reported as both', () => {
    const { fast, slow } = splitPhases([50_000, 51_000, 49_500, 50_500]);
    expect(fast).toEqual(slow);
    expect(fast.share).toBe(1);
    expect(fast.tuplesPerSecond).toBeCloseTo(50_250);
  });
});
