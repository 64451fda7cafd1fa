/**
 * Every shell line the manual prints (README.md and docs/*.md, fenced `sh` blocks) is accounted for, so that
 * a page cannot gain a command nobody runs:
 * - the pages a test runs line by line, as printed (each test reads its page and extracts the lines);
 * - the development and benchmark lines: `.ci/run` runs the README's `npm test` and `BENCH_QUICK=1 npm run
 *   bench` as printed; every other `npm run <script>` line must name a script package.json has, every
 *   `scripts/nodes.sh <major>` a Node that script pins, every `BENCH_SECTIONS=<name>` a section bench/run.ts
 *   knows, every file a line runs must exist;
 * - what cannot run here, with the reason (a Storm command line on a cluster).
 * A new line anywhere else fails here until it is run by a test or listed with its reason.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/**
 * The pages whose shell lines a test runs as printed, and that test; with `section`, only that section's
 * lines (the test extracts that section: the rest of the page is accounted for like any other page).
 */
const RUN_AS_PRINTED: Readonly<Record<string, { test: string; section?: string }>> = {
  'docs/try-it.md': { test: 'test/e2e/tryIt.test.ts' },
  'docs/migration.md': { test: 'test/integration/import.test.ts' },
  'docs/migration-kcl.md': { test: 'test/integration/kcl.test.ts' },
  'docs/operations.md': { test: 'test/e2e/operationsTools.test.ts', section: 'Status and reset' },
};

/** Lines that cannot run in a test here, and why. */
const NOT_RUN: Readonly<Record<string, string>> = {
  'storm kill clickstream-old -w 30': 'a Storm command line against a cluster (there is none in the tests)',
  'storm list': 'a Storm command line against a cluster (there is none in the tests)',
  'storm jar clickstream-v2.jar com.example.ClickstreamTopology':
    'a Storm command line against a cluster: test/cluster/realCluster.cluster.ts submits a second version so (npm run test:cluster)',
  'storm kill clickstream-v1':
    'a Storm command line against a cluster: test/cluster/realCluster.cluster.ts kills the first version so, with the default wait (npm run test:cluster)',
};

/** The part of a page under `## section`, up to the next `## `. */
const sectionOf = (text: string, section: string) => text.split(`\n## ${section}\n`)[1]?.split('\n## ')[0] ?? '';

function shellLines(page: string, section?: string): string[] {
  const text = section === undefined ? read(page) : sectionOf(read(page), section);
  return [...text.matchAll(/^\s*```(?:sh|bash|shell)\n([\s\S]*?)^\s*```/gm)]
    .flatMap((m) => m[1].split('\n'))
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((p) =>
  p.endsWith('.md'),
);
const ci = read('.ci/run');
const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
const pinnedNodes = /MAJORS=\(([\d ]+)\)/.exec(read('scripts/nodes.sh'))?.[1].split(' ') ?? [];
const benchRun = read('bench/run.ts') + read('bench/report.ts');

/** Why `line` of `page` is accounted for, or undefined. */
function accountedFor(page: string, line: string): string | undefined {
  if (NOT_RUN[line]) return NOT_RUN[line];
  const runner = RUN_AS_PRINTED[page];
  if (runner && (runner.section === undefined || shellLines(page, runner.section).includes(line))) {
    const source = read(runner.test);
    const names = source.includes(page) && (runner.section === undefined || source.includes(runner.section));
    return names ? `run as printed by ${runner.test}` : undefined;
  }
  if (new RegExp(`^(SPOUT_NODE=\\S+ )?(CI=true )?${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').test(ci))
    return 'run by .ci/run';
  const problems: string[] = [];
  for (const [, script] of line.matchAll(/npm run ([\w:]+)/g)) if (!scripts.includes(script)) problems.push(script);
  for (const [, major] of line.matchAll(/scripts\/nodes\.sh (\d+)/g))
    if (!pinnedNodes.includes(major)) problems.push(major);
  for (const [, section] of line.matchAll(/BENCH_SECTIONS=(\w+)/g))
    if (!benchRun.includes(`'${section}'`)) problems.push(section);
  for (const [, file] of line.matchAll(/(?:tsx|node|bash) ((?:bench|scripts)\/[\w./-]+)/g))
    if (!existsSync(join(ROOT, file))) problems.push(file);
  const known =
    /^(SPOUT_NODE=(\$\(bash scripts\/nodes\.sh \d+\)|\S+) |STORM_VERSION=\S+ |BENCH_\w+=\S+ )*(npm (ci|test|run [\w:]+)|npx tsx (bench|scripts)\/)/.test(
      line,
    );
  return known && problems.length === 0 ? 'names scripts, Nodes, sections and files that exist' : undefined;
}

test('every shell line of the manual is run as printed by a test, or names only what exists, or says why not', () => {
  const unaccounted = pages.flatMap((page) =>
    shellLines(page)
      .filter((line) => accountedFor(page, line) === undefined)
      .map((line) => `${page}: ${line}`),
  );
  expect(unaccounted).toEqual([]);
});

test('the pages run as printed are read by their tests, and the README commands by .ci/run', () => {
  for (const [page, { test, section }] of Object.entries(RUN_AS_PRINTED)) {
    expect(read(test)).toContain(page);
    if (section !== undefined) expect(shellLines(page, section)).not.toEqual([]);
  }
  expect(ci).toMatch(/^SPOUT_NODE=\S+ npm test$/m);
  expect(ci).toMatch(/^BENCH_QUICK=1 npm run bench$/m);
});

test('catches a line that names what does not exist', () => {
  expect(accountedFor('docs/development.md', 'npm run test:nothing')).toBeUndefined();
  expect(
    accountedFor('docs/development.md', 'SPOUT_NODE=$(bash scripts/nodes.sh 18) npm run test:integration'),
  ).toBeUndefined();
  expect(accountedFor('docs/benchmarks.md', 'BENCH_SECTIONS=nothing npm run bench')).toBeUndefined();
  expect(accountedFor('docs/development.md', 'rm -rf /')).toBeUndefined();
  expect(accountedFor('docs/development.md', 'npm run test:unit')).toBeDefined();
  // A page run as printed in one section: a line elsewhere on it is not run by that test.
  expect(
    accountedFor('docs/operations.md', 'java -jar kinesis-shell-spout-0.1.0.jar status --config spout.json'),
  ).toBeDefined();
  expect(accountedFor('docs/operations.md', 'kinesis-spout drop-everything')).toBeUndefined();
});
