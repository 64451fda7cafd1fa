/**
 * docs/design.md stays true to the code: its architecture table names every folder of src/ (and no other),
 * and every invariant and contract a comment cites by number is defined there.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
const design = readFileSync(join(ROOT, 'docs/design.md'), 'utf8');
const section = (heading: string) => design.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'target' ? [] : sources(path);
    return /\.(ts|java)$/.test(e.name) ? [path] : [];
  });
}
const code = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'test')), ...sources(join(ROOT, 'storm/src'))].map(
  (f) => readFileSync(f, 'utf8'),
);

test('the architecture table has one row per folder of src/', () => {
  const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `src/${e.name}/`)
    .sort();
  const rows = [...section('Architecture').matchAll(/^\| \[`(src\/[\w-]+\/)`\]/gm)].map((m) => m[1]).sort();
  expect(rows).toEqual(folders);
});

test('every invariant a comment cites by number is defined under Invariants', () => {
  const cited = new Set(code.flatMap((text) => [...text.matchAll(/\binvariants? (\d+)/gi)].map((m) => m[1])));
  const defined = new Set([...section('Invariants').matchAll(/^(\d+)\. \*\*/gm)].map((m) => m[1]));
  expect(cited.size).toBeGreaterThan(0);
  expect([...cited].filter((n) => !defined.has(n))).toEqual([]);
});

test('every contract a comment cites (contract C2, "(C4)") is defined under Contracts', () => {
  const cited = new Set(
    code.flatMap((text) => [...text.matchAll(/(?:\bcontract |\bof |\()(C\d+)\b/g)].map((m) => m[1])),
  );
  const defined = new Set([...section('Contracts').matchAll(/^- \*\*(C\d+),/gm)].map((m) => m[1]));
  expect(cited.size).toBeGreaterThan(0);
  expect([...cited].filter((c) => !defined.has(c))).toEqual([]);
});
