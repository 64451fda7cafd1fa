import { loadConfig } from '../../../src/config/config';
import { ErrorCode, SpoutError } from '../../../src/errors';
import { joinFailure, REPORT_AFTER_FAILURES } from '../../../src/assignment/failures';

const config = loadConfig({
  'kinesis.spout': { region: 'us-east-1', streamName: 's', applicationName: 'a', zookeeper: { connect: 'zk:2181' } },
});
const stormDefaulted = loadConfig({
  'storm.zookeeper.servers': ['zk'],
  'kinesis.spout': { region: 'us-east-1', streamName: 's', applicationName: 'a' },
});
const stream = 'stream s in r';
const awsError = (name: string) => Object.assign(new Error(`${name} happened`), { name });

describe('what a failed join tells the operator', () => {
  it('a ZooKeeper that may come back (retriable) is reported once it persists, naming where the address came from', () => {
    const err = new SpoutError(ErrorCode.ZooKeeper, 'could not connect', { retriable: true });
    expect(joinFailure(err, REPORT_AFTER_FAILURES - 1, config, stream).report).toBe(false);
    const reported = joinFailure(err, REPORT_AFTER_FAILURES, config, stream);
    expect(reported.report).toBe(true);
    expect(reported.message).toMatch(
      /^cannot join ZooKeeper at zk:2181 \(attempt 3; retrying in 2 s\): .*could not connect\. Check kinesis\.spout\.zookeeper\.connect/,
    );
    expect(joinFailure(err, 3, stormDefaulted, stream).message).toMatch(
      /Check storm\.zookeeper\.servers\/storm\.zookeeper\.port/,
    );
  });

  it('an answer waiting will not change (ACL, credentials, SASL required) is reported at once', () => {
    const err = new SpoutError(ErrorCode.ZooKeeper, 'ZooKeeper create /x failed: NO_AUTH');
    expect(joinFailure(err, 1, config, stream)).toMatchObject({ report: true });
  });

  it('a Kinesis error is named as one, with its fix, reported as soon as its kind warrants', () => {
    const denied = joinFailure(awsError('AccessDeniedException'), 1, config, stream);
    expect(denied.report).toBe(true);
    expect(denied.key).toBe('kinesis:AccessDeniedException');
    expect(denied.message).toMatch(
      /^cannot start reading stream s in r .*AccessDeniedException.*grant the worker's role/,
    );
    expect(denied.message).not.toMatch(/ZooKeeper/);
    expect(joinFailure(awsError('ResourceNotFoundException'), 2, config, stream).report).toBe(false);
    expect(joinFailure(awsError('ResourceNotFoundException'), 3, config, stream).report).toBe(true);
  });

  it('a re-created stream is refused at once and retried slowly', () => {
    const err = new SpoutError(ErrorCode.StreamMismatch, 'refusing to read');
    expect(joinFailure(err, 1, config, stream)).toEqual({
      key: 'refused',
      message: 'refusing to read',
      report: true,
      retryInMs: 60_000,
    });
  });
});
