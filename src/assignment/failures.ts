/**
 * What a failed join or assignment round means for the operator: which cause (ZooKeeper, the Kinesis stream, the stream's
 * identity), what to do, and whether it is worth Storm's `error` now or only once it persists. Pure.
 */
import type { SpoutConfig } from '../config/config';
import { describeError, ErrorCode, SpoutError } from '../errors';
import { kinesisProblem } from '../kinesis/errors';

/** Failed joins in a row before a cause that may pass by itself (a server restarting, a network blip) is reported. */
export const REPORT_AFTER_FAILURES = 3;

export interface JoinFailure {
  /** Rate-limit key: one cause, one report per interval. */
  key: string;
  message: string;
  /** Report through Storm's `error` now (else only a warning log). */
  report: boolean;
  /** Wait before the next attempt. */
  retryInMs: number;
}

export function joinRetryDelayMs(attempt: number): number {
  return Math.min(10_000, 250 * 2 ** Math.min(6, attempt));
}

function zookeeperOrigin(config: SpoutConfig): string {
  return config.origins.zookeeperConnect === 'storm.zookeeper.servers'
    ? 'storm.zookeeper.servers/storm.zookeeper.port (no kinesis.spout.zookeeper.connect)'
    : 'kinesis.spout.zookeeper.connect';
}

export function joinFailure(err: unknown, attempt: number, config: SpoutConfig, streamLabel: string): JoinFailure {
  if (err instanceof SpoutError && err.code === ErrorCode.StreamMismatch) {
    return { key: 'refused', message: err.message, report: true, retryInMs: 60_000 };
  }
  const retryInMs = joinRetryDelayMs(attempt);
  const again = `(attempt ${attempt}; retrying in ${Math.round(retryInMs / 100) / 10} s)`;
  if (err instanceof SpoutError && (err.code === ErrorCode.ZooKeeper || err.code === ErrorCode.CorruptState)) {
    // Not retriable: an answer (refused credentials, an ACL, SASL required, a corrupt node) that waiting will not change.
    const lasting = !err.retriable;
    const hint = lasting
      ? ''
      : `. Check ${zookeeperOrigin(config)}, that ZooKeeper is up, and that this host may reach it`;
    return {
      key: lasting ? `zookeeper:${err.code}` : 'join',
      message: `cannot join ZooKeeper at ${config.zookeeper.connect} ${again}: ${describeError(err)}${hint}`,
      report: lasting || attempt >= REPORT_AFTER_FAILURES,
      retryInMs,
    };
  }
  const problem = kinesisProblem(err, streamLabel);
  return {
    key: `kinesis:${problem.name}`,
    message: `cannot start reading ${streamLabel} ${again}: ${describeError(err)}; ${problem.fix}`,
    report: attempt >= problem.reportAfter,
    retryInMs,
  };
}

export interface RoundFailure {
  /** Rate-limit key of the report. */
  key: string;
  /** Report through Storm's `error` now (`reportMessage`), else only a warning log (`message`). */
  report: boolean;
  message: string;
  reportMessage: string;
  /** Kinesis says the stream (or a shard) does not exist: a fresh listing and the stream's identity decide. */
  notFound: boolean;
}

/** What the `failures`-th failed assignment round in a row means for the operator. */
export function roundFailure(err: unknown, failures: number, config: SpoutConfig, streamLabel: string): RoundFailure {
  const message = `shard assignment failed (${failures} time(s) in a row): ${describeError(err)}`;
  if (err instanceof SpoutError && err.code === ErrorCode.ZooKeeper)
    return {
      key: 'assign',
      report: failures >= REPORT_AFTER_FAILURES,
      message,
      reportMessage: `${message}; check that ZooKeeper at ${config.zookeeper.connect} is healthy`,
      notFound: false,
    };
  const problem = kinesisProblem(err, streamLabel);
  return {
    key: `kinesis:${problem.name}`,
    report: failures >= problem.reportAfter,
    message,
    reportMessage: `${message}; ${problem.fix}`,
    notFound: problem.name === 'ResourceNotFoundException',
  };
}
