import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configTable } from '../../../src/config/docs';
import { replaceBetween, textBetween } from '../../../scripts/generated';

const PAGE = join(__dirname, '../../../docs/configuration.md');

test("docs/configuration.md's table is the schema's (run `npm run docs:config` after changing the schema)", () => {
  expect(textBetween(readFileSync(PAGE, 'utf8'), 'config')).toBe(configTable());
});

describe('the generated part of a page', () => {
  test('is replaced between its markers, the hand-written text around it kept', () => {
    const page = 'before\n<!-- t:start -->\nold\n<!-- t:end -->\nafter\n';
    expect(replaceBetween(page, 't', 'new', 'p.md')).toBe('before\n<!-- t:start -->\nnew\n<!-- t:end -->\nafter\n');
  });

  test.each([
    ['no markers', 'text'],
    ['only a start', '<!-- t:start -->'],
    ['the end first', '<!-- t:end --> <!-- t:start -->'],
    ['two starts', '<!-- t:start --> <!-- t:start --> <!-- t:end -->'],
  ])('is refused with %s, rather than written nowhere', (_, page) => {
    expect(() => replaceBetween(page, 't', 'new', 'p.md')).toThrow('p.md: needs exactly one <!-- t:start -->');
  });
});
