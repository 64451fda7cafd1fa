import fc from 'fast-check';
import { escapeNul, NulUnescaper } from '../../../src/multilang/nulEscape';

describe('NUL escaping (Storm to the process, compact format)', () => {
  it('leaves no NUL, and gives back the bytes however they are cut and wherever wake-up NULs land', () => {
    fc.assert(
      fc.property(
        // Mostly 0s, 1s and 2s: the bytes escaping is about.
        fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a.map((b) => (b < 192 ? b % 3 : b)))),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (bytes, cuts, wakes) => {
          const escaped = escapeNul(bytes);
          expect(escaped.indexOf(0)).toBe(-1);
          // Wake-up NULs inserted, then cut into pieces, each overwritten once pushed (as the stdin reader reuses its buffer).
          const stream = [...escaped];
          for (const w of wakes) stream.splice(w % (stream.length + 1), 0, 0);
          const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
          const unescaper = new NulUnescaper();
          const got: Buffer[] = [];
          let last = 0;
          for (const p of [...points, stream.length]) {
            const chunk = Buffer.from(stream.slice(last, p));
            got.push(Buffer.from(unescaper.push(chunk)));
            chunk.fill(0xee);
            last = p;
          }
          expect(Buffer.concat(got)).toEqual(bytes);
        },
      ),
    );
  });

  it('passes a piece with nothing to undo through as it is', () => {
    const chunk = Buffer.from('Nabc');
    expect(new NulUnescaper().push(chunk)).toBe(chunk);
  });
});
