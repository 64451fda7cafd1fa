/** The session keeper through injected joins: retries, expiry and rejoin, refusing a re-created stream. */
import { testConfig } from '../fakes/testConfig';
import type { ConnectionState } from '../../../src/coordination/zooKeeper';
import type { Bootstrap } from '../../../src/core/position';
import type { ShardNode } from '../../../src/core/shard';
import { ErrorCode, SpoutError } from '../../../src/errors';
import { Reporter } from '../../../src/core/log';
import { type KeptSession, SessionKeeper } from '../../../src/stream/sessionKeeper';
import { ManualClock } from '../fakes/manualClock';
import { RecordingLogger } from '../fakes/recordingLogger';

const STREAM_ARN = 'arn:aws:kinesis:us-east-1:1:stream/s';
const bootstrap: Bootstrap = {
  v: 1,
  firstStartMs: 0,
  initialPosition: 'TRIM_HORIZON',
  streamArn: STREAM_ARN,
  streamCreatedMs: 1_000,
  shardsAtStart: ['s-0'],
  openAtStart: ['s-0'],
};

/** A ZooKeeper session as the keeper sees it; the test changes its state. */
class TestSession implements KeptSession {
  closed = false;
  readonly zk: KeptSession['zk'] & { connectionState: ConnectionState };
  readonly store: { memberId: string; base: string };
  readonly bootstrap = bootstrap;

  constructor(readonly sessionId: string) {
    const session = this;
    this.zk = {
      sessionId,
      connectionState: 'connected',
      trustedUntil: () => 5_000,
      close() {
        session.closed = true;
      },
    };
    this.store = { memberId: `task0-${sessionId}`, base: '/root/app/s' };
  }
}

/** Joins the test scripts: the next attempts fail with the errors given, then each succeeds with a new session. */
class TestJoins {
  attempts = 0;
  readonly sessions: TestSession[] = [];
  private readonly failures: unknown[] = [];
  private onState: ((zk: KeptSession['zk'], state: ConnectionState) => void) | undefined;

  setNextJoinsFail(...errors: unknown[]): void {
    this.failures.push(...errors);
  }

  readonly join = async (onState: (zk: KeptSession['zk'], state: ConnectionState) => void) => {
    this.attempts += 1;
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.onState = onState;
    const session = new TestSession(`zk-${this.attempts}`);
    this.sessions.push(session);
    return { session, shards: [] as ShardNode[] };
  };

  /** The server says the session expired. */
  expire(session: TestSession): void {
    session.zk.connectionState = 'expired';
    this.onState?.(session.zk, 'expired');
  }

  /** The connection is lost, then comes back to the same session. */
  disconnectAndReconnect(session: TestSession): void {
    session.zk.connectionState = 'disconnected';
    this.onState?.(session.zk, 'disconnected');
    session.zk.connectionState = 'connected';
    this.onState?.(session.zk, 'connected');
  }
}

function setup() {
  const clock = new ManualClock();
  const logger = new RecordingLogger();
  const joins = new TestJoins();
  const events: string[] = [];
  let identity: { streamArn: string; createdMs: number } | undefined = { streamArn: STREAM_ARN, createdMs: 1_000 };
  let describes = 0;
  const config = testConfig();
  const keeper = new SessionKeeper<TestSession>({
    config,
    scheduler: clock,
    reporter: new Reporter(logger, clock),
    streamLabel: 'stream s in us-east-1',
    join: joins.join,
    describeStream: async () => {
      describes += 1;
      if (!identity) throw Object.assign(new Error('Stream s not found'), { name: 'ResourceNotFoundException' });
      return identity;
    },
    joined: (session, _shards, first) => events.push(`joined ${session.sessionId}${first ? ' (first)' : ''}`),
    dropped: () => events.push('dropped'),
    reconnected: () => events.push('reconnected'),
    heldCount: () => 2,
  });
  const streamRecreated = () => {
    identity = { streamArn: STREAM_ARN, createdMs: 9_000 };
  };
  const streamDeleted = () => {
    identity = undefined;
  };
  return { clock, logger, joins, events, keeper, streamRecreated, streamDeleted, describes: () => describes };
}

const zkDown = () => new SpoutError(ErrorCode.ZooKeeper, 'connection refused', { retriable: true });

describe('SessionKeeper', () => {
  it('retries a failing join with back-off, and reports it only once it persists', async () => {
    const { clock, logger, joins, events, keeper } = setup();
    joins.setNextJoinsFail(zkDown(), zkDown(), zkDown());
    void keeper.join();
    await clock.advance(0);
    expect(joins.attempts).toBe(1);
    expect(logger.errors).toEqual([]);
    await clock.advance(60_000);
    expect(joins.attempts).toBe(4);
    expect(logger.errors).toEqual([expect.stringContaining('cannot join ZooKeeper at zk:2181 (attempt 3')]);
    expect(events).toEqual(['joined zk-4 (first)']);
    expect(keeper.current?.sessionId).toBe('zk-4');
    expect(keeper.trustedUntil()).toBe(5_000);
  });

  it('joins once however often it is asked while joining or joined', async () => {
    const { clock, joins, keeper } = setup();
    joins.setNextJoinsFail(zkDown());
    void keeper.join();
    void keeper.join();
    await clock.advance(10_000);
    void keeper.join();
    await clock.advance(10_000);
    expect(joins.attempts).toBe(2);
  });

  it('drops everything when the session expires, and joins again with a new one', async () => {
    const { clock, joins, events, keeper, logger } = setup();
    void keeper.join();
    await clock.advance(0);
    const first = joins.sessions[0];
    joins.expire(first);
    expect(keeper.current).toBeUndefined();
    expect(keeper.trustedUntil()).toBe(-Infinity);
    expect(first.closed).toBe(true);
    await clock.advance(0);
    expect(events).toEqual(['joined zk-1 (first)', 'dropped', 'joined zk-2']);
    expect(logger.said('ZooKeeper session zk-1 expired: dropping 2 shard(s)')).toBe(true);
  });

  it('keeps the session over a lost connection, asking for a round when it is back', async () => {
    const { clock, joins, events, keeper } = setup();
    void keeper.join();
    await clock.advance(0);
    joins.disconnectAndReconnect(joins.sessions[0]);
    expect(events).toEqual(['joined zk-1 (first)', 'reconnected']);
    expect(keeper.connected).toBe(true);
  });

  it('ignores the state of a session it already dropped', async () => {
    const { clock, joins, events, keeper } = setup();
    void keeper.join();
    await clock.advance(0);
    const first = joins.sessions[0];
    joins.expire(first);
    await clock.advance(0);
    joins.disconnectAndReconnect(first);
    expect(events).toEqual(['joined zk-1 (first)', 'dropped', 'joined zk-2']);
  });

  it('refuses a stream re-created under the same name: reported, dropped, joined again', async () => {
    const { clock, joins, events, keeper, logger, streamRecreated } = setup();
    void keeper.join();
    await clock.advance(0);
    expect(await keeper.streamStillHolds(joins.sessions[0])).toBe(true);
    streamRecreated();
    expect(await keeper.streamStillHolds(joins.sessions[0])).toBe(false);
    expect(logger.errors).toEqual([expect.stringContaining('refusing to read')]);
    await clock.advance(0);
    expect(events).toEqual(['joined zk-1 (first)', 'dropped', 'joined zk-2']);
  });

  it('keeps readers of a missing shard waiting while the stream is gone, then refuses it re-created', async () => {
    const { clock, events, keeper, logger, streamDeleted, streamRecreated, describes } = setup();
    void keeper.join();
    await clock.advance(0);
    streamDeleted();
    let confirmed = 0;
    // Two readers told their shard is gone wait on one check.
    for (let i = 0; i < 2; i += 1) void keeper.confirmStream().then(() => void (confirmed += 1));
    await clock.advance(30_000);
    expect(confirmed).toBe(0);
    const asked = describes();
    expect(asked).toBeGreaterThan(3);
    expect(asked).toBeLessThan(15); // backed off, one check for both
    expect(logger.said('the stream cannot be described')).toBe(true);
    streamRecreated();
    await clock.advance(15_000);
    expect(confirmed).toBe(2);
    expect(logger.errors).toEqual([expect.stringContaining('refusing to read')]);
    expect(events).toEqual(['joined zk-1 (first)', 'dropped', 'joined zk-2']);
  });

  it('lets readers of a missing shard go on once the stream is confirmed the same', async () => {
    const { clock, events, keeper, joins, describes } = setup();
    void keeper.join();
    await clock.advance(0);
    let confirmed = false;
    void keeper.confirmStream().then(() => void (confirmed = true));
    // The round's own identity check, asked at the same time, shares the one DescribeStreamSummary.
    expect(await keeper.streamStillHolds(joins.sessions[0])).toBe(true);
    await clock.advance(0);
    expect(confirmed).toBe(true);
    expect(describes()).toBe(1);
    expect(events).toEqual(['joined zk-1 (first)']);
  });

  it('joins no more once stopped', async () => {
    const { clock, joins, keeper } = setup();
    joins.setNextJoinsFail(zkDown());
    void keeper.join();
    await clock.advance(0);
    expect(keeper.stop()).toBeUndefined();
    await clock.advance(60_000);
    expect(joins.attempts).toBe(1);
  });
});
