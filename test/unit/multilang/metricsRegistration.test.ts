import {
  METRICS_CONF_KEY,
  metricsRegistration,
  metricsSendIntervalMs,
} from '../../../src/multilang/metricsRegistration';

const good = { version: 1, process: 'kinesis-spout', shards: 'kinesis-spout-shards', intervalSecs: 60 };

describe('metricsRegistration', () => {
  it('is none without the key: a plain ShellSpout registers nothing, and nothing may be sent', () => {
    expect(metricsRegistration({})).toBeUndefined();
    expect(metricsRegistration({ 'kinesis.spout': {} })).toBeUndefined();
  });

  it('reads the names the Java class registered', () => {
    expect(metricsRegistration({ [METRICS_CONF_KEY]: good })).toEqual({
      process: 'kinesis-spout',
      shards: 'kinesis-spout-shards',
      intervalSecs: 60,
    });
  });

  it.each([
    ['not an object', 'kinesis-spout', /is "kinesis-spout", not an object/],
    ['another version', { ...good, version: 2 }, /has version 2: this kinesis-spout.cjs speaks version 1 only/],
    ['no version', { process: 'a', shards: 'b', intervalSecs: 60 }, /has version undefined/],
    ['an unknown key', { ...good, extra: true }, /unknown key\(s\) extra/],
    ['no process name', { ...good, process: '' }, /has process = "", not a metric name/],
    ['a shards name that is not a string', { ...good, shards: 3 }, /has shards = 3, not a metric name/],
    [
      'the same name twice',
      { ...good, shards: 'kinesis-spout' },
      /names the same metric "kinesis-spout" for process and shards/,
    ],
    ['a fractional interval', { ...good, intervalSecs: 1.5 }, /intervalSecs = 1.5, not a whole number of seconds ≥ 1/],
    ['a zero interval', { ...good, intervalSecs: 0 }, /intervalSecs = 0/],
    ['an interval given as text', { ...good, intervalSecs: '60' }, /intervalSecs = "60"/],
  ])('refuses %s, naming the key, what is wrong and what is expected', (_what, value, message) => {
    expect(() => metricsRegistration({ [METRICS_CONF_KEY]: value })).toThrow(message);
    expect(() => metricsRegistration({ [METRICS_CONF_KEY]: value })).toThrow(
      /^kinesis\.spout\.metrics .*; expected \{"version": 1, .*no metrics are sent$/,
    );
  });
});

describe('metricsSendIntervalMs', () => {
  it('sends twice per Storm bucket, between every second and every 10 s', () => {
    const every = (intervalSecs: number) => metricsSendIntervalMs({ ...good, intervalSecs });
    expect(every(60)).toBe(10_000);
    expect(every(10)).toBe(5_000);
    expect(every(5)).toBe(2_500);
    expect(every(1)).toBe(1_000);
    expect(every(3_600)).toBe(10_000);
  });
});
