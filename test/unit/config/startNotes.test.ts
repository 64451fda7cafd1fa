import { LogLevel } from '../../../src/core/log';
import { validateConfig } from '../../../src/config/config';
import { startNotes } from '../../../src/config/startNotes';

const base = { region: 'us-east-1', streamName: 'orders', applicationName: 'app', zookeeper: { connect: 'z:1' } };
const notes = (extra: Record<string, unknown> = {}) => startNotes(validateConfig({ ...base, ...extra }));

describe('start notes: what the deploy runs with', () => {
  it('say, once, the delivery, tracking, read mode, balance, ordering and initial position', () => {
    const running = notes().filter((n) => n.message.startsWith('running with'));
    expect(running).toEqual([
      {
        level: LogLevel.Info,
        message: expect.stringMatching(
          /^running with delivery at-least-once \(every tuple tracked\), readMode polling, balance count, ordering parents-acked, initialPosition LATEST /,
        ),
      },
    ]);
  });

  it('name what was chosen instead of the defaults, each stream its own initial position', () => {
    const [first] = notes({
      delivery: 'at-most-once',
      tupleTracking: true,
      readMode: 'fanOut',
      balance: 'throughput',
      ordering: 'none',
      streamName: undefined,
      initialPosition: 'TRIM_HORIZON',
      streams: [{ streamName: 'a' }, { streamName: 'b', initialPosition: { atTimestamp: '2026-12-01T00:00:00Z' } }],
    });
    expect(first.message).toMatch(
      /^running with delivery at-most-once \(tupleTracking on\), readMode fanOut, balance throughput, ordering none, initialPosition a TRIM_HORIZON, b atTimestamp 2026-12-01T00:00:00Z /,
    );
  });

  it('warn about a well-formed region this version does not know, and not about a known one', () => {
    expect(notes().some((n) => n.message.includes('not a region this version knows'))).toBe(false);
    const warnings = notes({
      region: 'xx-future-9',
      streamName: undefined,
      streams: [{ streamName: 'a' }, { streamName: 'b', region: 'eu-wast-1' }],
    }).filter((n) => n.level === LogLevel.Warn && n.message.includes('not a region this version knows'));
    expect(warnings.map((n) => n.message.split(' is not')[0])).toEqual([
      'WARNING: kinesis.spout.region = "xx-future-9"',
      'WARNING: kinesis.spout.streams[1].region = "eu-wast-1"',
    ]);
  });
});
