/**
 * The manual's links: every relative link in the README, docs/ and the other Markdown pages of the
 * repository names a file that exists and, into a Markdown page, a heading that page has (GitHub's
 * anchors). So a section that moved out of the README cannot leave a link pointing at where it was.
 * Code and comments that send a reader to `README.md#...` or `docs/<page>.md#...` are held to the same.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { anchors, relativeLinks, slug } from './markdown';

const ROOT = resolve(__dirname, '../../..');
/** Not ours, or not pages: dependencies, build output, Storm homes and results. */
const SKIP = new Set(['node_modules', '.git', 'target', 'storm-home', 'results', 'resources']);

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name)) return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path, keep) : keep(entry.name) ? [path] : [];
  });
}

/** Where the README's sections went when the manual moved to docs/: a link to the old anchor is told where. */
const MOVED: Record<string, string> = {
  'using-it-in-a-topology': 'docs/topology.md',
  'running-on-a-storm-cluster': 'docs/operations.md#running-on-a-storm-cluster',
  'deploying-a-checklist': 'docs/operations.md#deploying-a-checklist',
  'tuples-and-message-ids': 'docs/topology.md#tuples-and-message-ids',
  'kpl-aggregated-records': 'docs/topology.md#kpl-aggregated-records',
  'where-reading-starts': 'docs/configuration.md#where-reading-starts',
  'retries-and-dead-letters': 'docs/topology.md#retries-and-dead-letters',
  'enhanced-fan-out-not-implemented': 'docs/design.md#enhanced-fan-out-and-the-server-it-is-tested-against',
  configuration: 'docs/configuration.md',
  'zookeeper-layout': 'docs/zookeeper.md#layout',
  'zookeeper-security': 'docs/zookeeper.md#security',
  errors: 'docs/errors.md',
  'clock-assumptions': 'docs/guarantees.md#clock-assumptions',
  'how-it-is-tested': 'docs/guarantees.md#how-it-is-tested',
  'tested-on-a-real-cluster': 'docs/guarantees.md#tested-on-a-real-cluster',
  operations: 'docs/operations.md',
  'status-and-reset': 'docs/operations.md#status-and-reset',
  metrics: 'docs/metrics.md',
  benchmarks: 'docs/benchmarks.md',
};
const README = join(ROOT, 'README.md');

const anchorsOf = new Map<string, Set<string>>();
function pageAnchors(path: string): Set<string> {
  if (!anchorsOf.has(path)) anchorsOf.set(path, anchors(readFileSync(path, 'utf8')));
  return anchorsOf.get(path)!;
}

/** What is wrong with a link to `target` from a file in `fromDir`, or undefined when it leads somewhere. */
function problem(fromFile: string, target: string): string | undefined {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? fromFile : resolve(dirname(fromFile), decodeURIComponent(path));
  if (!existsSync(file)) return `no such file ${relative(ROOT, file)}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md'))
    return `an anchor into ${relative(ROOT, file)}, not a page`;
  if (file === README && MOVED[anchor] && !pageAnchors(file).has(anchor))
    return `the README's section #${anchor} moved to ${MOVED[anchor]}`;
  if (!pageAnchors(file).has(anchor.toLowerCase())) {
    const known = [...pageAnchors(file)].join(', ');
    return `${relative(ROOT, file)} has no heading #${anchor} (it has: ${known})`;
  }
  return undefined;
}

const pages = files(ROOT, (name) => name.endsWith('.md'));

test('the manual is where these tests look for it', () => {
  const names = pages.map((p) => relative(ROOT, p));
  expect(names).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/configuration.md']));
});

test.each(pages.map((p) => [relative(ROOT, p), p]))(
  'every relative link in %s leads to a file and a heading',
  (_, page) => {
    const broken = relativeLinks(readFileSync(page, 'utf8'))
      .map((link) => ({ ...link, problem: problem(page, link.target) }))
      .filter((link) => link.problem !== undefined)
      .map((link) => `line ${link.line}: (${link.target}) ${link.problem}`);
    expect(broken).toEqual([]);
  },
);

test('every page of docs/ is reachable from the index, and the README links to the index', () => {
  const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
  const linked = new Set(relativeLinks(index).map((l) => l.target.split('#')[0]));
  const unlinked = readdirSync(join(ROOT, 'docs')).filter(
    (f) => f.endsWith('.md') && f !== 'README.md' && !linked.has(f),
  );
  expect(unlinked).toEqual([]);
  const readme = relativeLinks(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((l) => l.target);
  expect(readme).toContain('docs/README.md');
});

test('code and comments that point into the manual name a page and a heading that exist', () => {
  const sources = [
    ...files(join(ROOT, 'src'), (n) => n.endsWith('.ts')),
    ...files(join(ROOT, 'storm'), (n) => n.endsWith('.java')),
    ...files(join(ROOT, 'topology-examples'), (n) => /\.(java|clj)$/.test(n)),
    ...files(join(ROOT, 'scripts'), (n) => /\.(ts|mjs)$/.test(n)),
    ...files(join(ROOT, 'bench'), (n) => n.endsWith('.ts')),
  ];
  const broken = sources.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/\b(README\.md|docs\/[\w-]+\.md)(#[\w-]+)?/g)]
      // Relative to the repository's root, as a reader of the code takes them.
      .map((m) => ({ ref: m[0], problem: problem(README, `${m[1]}${m[2] ?? ''}`) }))
      .filter((r) => r.problem !== undefined)
      .map((r) => `${relative(ROOT, file)}: ${r.ref}: ${r.problem}`),
  );
  expect(broken).toEqual([]);
});

test('the README stays short (issue 15: at most 12 KB; the manual is docs/) and keeps the two commands', () => {
  const readme = readFileSync(README);
  expect(readme.length).toBeLessThanOrEqual(12 * 1024);
  expect(readme.toString('utf8')).toMatch(/^npm run demo {3}# .*\n^npm test {7}# /m);
});

test('no page of docs/ is over 30 KB (issue 31: a page a reader can get through; split a longer one)', () => {
  const over = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => ({ f, size: statSync(join(ROOT, 'docs', f)).size }))
    .filter(({ size }) => size > 30 * 1024)
    .map(({ f, size }) => `docs/${f}: ${size} bytes`);
  expect(over).toEqual([]);
});

test("the README's moved sections are where the list says", () => {
  const wrong = Object.entries(MOVED)
    .map(([old, now]) => ({ old, problem: problem(README, now) }))
    .filter((m) => m.problem !== undefined)
    .map((m) => `#${m.old}: ${m.problem}`);
  expect(wrong).toEqual([]);
});

describe('anchors as GitHub makes them', () => {
  test.each([
    ['Deploying: a checklist', 'deploying-a-checklist'],
    ['What `KinesisShellSpout` does', 'what-kinesisshellspout-does'],
    ['Reset, or starting over', 'reset-or-starting-over'],
    ['Invariants (`invariants.ts`, `heldRecords.ts`, `harness.ts`)', 'invariants-invariantsts-heldrecordsts-harnessts'],
    ['`storm rebalance` / deactivate', 'storm-rebalance--deactivate'],
    ['Not built: enhanced fan-out', 'not-built-enhanced-fan-out'],
    ['TRIM_HORIZON and **bold**', 'trim_horizon-and-bold'],
    ['[A link](x.md) here', 'a-link-here'],
  ])('%s → #%s', (heading, anchor) => {
    expect(slug(heading)).toBe(anchor);
  });

  test('a repeated heading gets -1, -2; headings in code blocks are none', () => {
    expect([...anchors('# A\n## A\n### A\n```sh\n# not a heading\n```\n')]).toEqual(['a', 'a-1', 'a-2']);
  });

  test('links in code are not links', () => {
    const text = 'see [x](a.md) and `[y](b.md)`\n```\n[z](c.md)\n```\n[w](https://example.com) [v](#here)';
    expect(relativeLinks(text).map((l) => l.target)).toEqual(['a.md', '#here']);
  });
});
