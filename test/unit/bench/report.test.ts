import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCHMARKS_PAGE, renderBenchmarks, type Report } from '../../../bench/report';

const RESULTS = join(__dirname, '../../../bench/results/2026-12-01T04-43-31.json');

test("a run's figures go between docs/benchmarks.md's markers, with machine, date and commit; the prose stays", () => {
  const page = readFileSync(BENCHMARKS_PAGE, 'utf8');
  const report = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
  const moved = { ...report, date: '2030-01-02T03:04:05.000Z', commit: 'abc1234' };
  const out = renderBenchmarks(page, moved);
  const [before, rest] = page.split('<!-- bench:start -->');
  const after = rest.split('<!-- bench:end -->')[1];
  expect(out.startsWith(`${before}<!-- bench:start -->\nMeasured 2030-01-02 on ${report.machine.cores} cores`)).toBe(
    true,
  );
  expect(out).toContain(`Node ${report.node}, commit abc1234`);
  expect(out.endsWith(`<!-- bench:end -->${after}`)).toBe(true);
  expect(renderBenchmarks(out, report)).toBe(renderBenchmarks(page, report));
});

test('a page without the markers is refused, not left as it was', () => {
  const report = JSON.parse(readFileSync(RESULTS, 'utf8')) as Report;
  expect(() => renderBenchmarks('# Benchmarks\n', report)).toThrow('docs/benchmarks.md: needs exactly one');
});
