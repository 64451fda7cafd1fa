import { type Logger, LogLevel, Reporter } from '../../../src/core/log';
import type { Scheduler } from '../../../src/core/scheduler';

/** A logger that keeps what it was told, and a clock the test moves. */
function recording() {
  const lines: { kind: 'log' | 'error'; level?: LogLevel; message: string }[] = [];
  const logger: Logger = {
    log: (level, message) => lines.push({ kind: 'log', level, message }),
    error: (message) => lines.push({ kind: 'error', message }),
  };
  let now = 0;
  const clock = { now: () => now } as Pick<Scheduler, 'now'> as Scheduler;
  return { lines, reporter: new Reporter(logger, clock), advance: (ms: number) => (now += ms) };
}

describe('Reporter', () => {
  it('reports a lasting problem to Storm once a minute and logs it as a warning in between', () => {
    const { lines, reporter, advance } = recording();
    for (let t = 0; t <= 60_000; t += 5_000) {
      reporter.problem('stream', 'stream missing');
      advance(5_000);
    }
    const errors = lines.filter((l) => l.kind === 'error');
    const warnings = lines.filter((l) => l.kind === 'log' && l.level === LogLevel.Warn);
    expect(errors).toHaveLength(2); // at 0 and at 60 s
    // Between them, repeats every 5 s are logged at most once per 10 s: at 5, 15, 25, 35, 45, 55 s.
    expect(warnings).toHaveLength(6);
    expect(warnings.every((w) => w.message === 'stream missing')).toBe(true);
  });

  it('keeps causes apart', () => {
    const { lines, reporter } = recording();
    reporter.problem('a', 'first');
    reporter.problem('b', 'second');
    expect(lines.filter((l) => l.kind === 'error').map((l) => l.message)).toEqual(['first', 'second']);
  });
});
