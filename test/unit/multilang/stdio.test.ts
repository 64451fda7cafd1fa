import fc from 'fast-check';
import { StdinText } from '../../../src/multilang/stdio';

describe('StdinText', () => {
  it('gives back the text however the bytes are cut and wherever wake-up NULs land', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme' }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (text, cuts, nuls) => {
          const bytes = [...Buffer.from(text)];
          // The watchdog's byte can arrive anywhere, even between the bytes of one character.
          for (const at of nuls) bytes.splice(at % (bytes.length + 1), 0, 0);
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const input = new StdinText();
          let got = '';
          let last = 0;
          for (const p of [...points, bytes.length]) {
            got += input.push(Buffer.from(bytes.slice(last, p)));
            last = p;
          }
          expect(got).toBe(text);
        },
      ),
    );
  });

  it('a lone wake-up is no text at all', () => {
    expect(new StdinText().push(Buffer.alloc(1))).toBe('');
  });
});
