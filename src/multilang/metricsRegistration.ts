/**
 * Which Storm metrics this process may report to (contract C2). Storm kills the worker when a `metrics`
 * frame names a metric the component did not register, so the process sends only to the names the Java
 * side declares, in the component conf key `kinesis.spout.metrics`, and to none without it (a plain
 * ShellSpout registers nothing).
 */
import { ErrorCode, SpoutError } from '../errors';
import { isObject } from '../core/json';

export const METRICS_CONF_KEY = 'kinesis.spout.metrics';
const VERSION = 1;
const KEYS = ['version', 'process', 'shards', 'intervalSecs'];

export interface MetricsRegistration {
  /** The registered per-process metric. */
  process: string;
  /** The registered per-shard metric. */
  shards: string;
  /** Storm's bucket: how often Storm hands the metrics to the consumers. */
  intervalSecs: number;
}

/**
 * The registration the handshake conf declares, or undefined when it declares none. A malformed one is
 * an error naming what is wrong (and then nothing may be sent: a wrong name would kill the worker).
 */
export function metricsRegistration(conf: Record<string, unknown>): MetricsRegistration | undefined {
  const value = conf[METRICS_CONF_KEY];
  if (value === undefined || value === null) return undefined;
  const expected = `{"version": ${VERSION}, "process": <metric name>, "shards": <metric name>, "intervalSecs": <whole seconds ≥ 1>}`;
  const bad = (problem: string) =>
    new SpoutError(
      ErrorCode.BadConfig,
      `${METRICS_CONF_KEY} ${problem}; expected ${expected} (set by the KinesisShellSpout Java class); no metrics are sent`,
    );
  if (!isObject(value)) throw bad(`is ${JSON.stringify(value)}, not an object`);
  if (value.version !== VERSION)
    throw bad(
      `has version ${JSON.stringify(value.version)}: this kinesis-spout.cjs speaks version ${VERSION} only (is the jar's Java class from another release?)`,
    );
  const unknown = Object.keys(value).filter((key) => !KEYS.includes(key));
  if (unknown.length > 0) throw bad(`has unknown key(s) ${unknown.join(', ')}`);
  for (const key of ['process', 'shards'] as const) {
    if (typeof value[key] !== 'string' || value[key] === '')
      throw bad(`has ${key} = ${JSON.stringify(value[key])}, not a metric name`);
  }
  if (value.process === value.shards)
    throw bad(`names the same metric "${String(value.process)}" for process and shards`);
  const interval = value.intervalSecs;
  if (typeof interval !== 'number' || !Number.isInteger(interval) || interval < 1)
    throw bad(`has intervalSecs = ${JSON.stringify(interval)}, not a whole number of seconds ≥ 1`);
  return { process: value.process as string, shards: value.shards as string, intervalSecs: interval };
}

/** How often the figures are sent: twice per Storm bucket, at least every 10 s and at most every second. */
export function metricsSendIntervalMs(registration: MetricsRegistration): number {
  return Math.min(10, Math.max(1, registration.intervalSecs / 2)) * 1000;
}
