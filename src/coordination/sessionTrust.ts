/**
 * How long this process may trust that ZooKeeper has not expired its session, from its own monotonic clock
 * and what the servers answered. Pure bookkeeping: the caller says what was sent when and what came back.
 *
 * Only the leader expires sessions: at its last touch + timeout (rounded up to a tick). It touches a session
 * when it creates or revalidates it, and when a follower reports that it heard the client: a follower
 * reports in its answer to the leader's ping, sent every tickTime / 2 on the link that also carries the
 * leader's proposals and commits. A follower cut off from the leader goes on answering reads for up to
 * syncLimit x tickTime while the leader expires the session, so an answered read proves nothing; nor does a
 * write's send time (the leader handles a forwarded write without touching the session). What can be
 * proved, on one connection, for a request T the follower answered:
 * - a write S sent at least PROPAGATION (leaderPingGapMs in core/timings.ts) after T was answered, then answered: its commit came down the
 *   leader's link after a ping the leader sent once T had reached the follower, so the follower had sent
 *   a report of T before S was answered;
 * - a later write S2, sent after S was answered, then answered: the follower forwarded it behind that
 *   report, so the leader touched the session (still alive: it accepted S2 after) after T was sent.
 * The leader cannot expire the session before T's send time + timeout: that is what trust grows from.
 *
 * Clock assumptions that remain:
 * - our clock is monotonic (performance.now) and runs at the rate of the leader's, give or take the margin
 *   (a tenth of the timeout, far above any real drift between two clocks over one session timeout);
 * - tickTime <= session timeout / 2 (true unless minSessionTimeout is configured below its default of
 *   2 x tickTime), so the leader pings a follower at least every timeout / 4 = PROPAGATION;
 * - the session timeout is the one the server granted, or the one asked for when smaller;
 * - a caller that checks trustedUntil() and is then paused acts on a stale answer: check right before
 *   acting; the margin is all the slack there is.
 */
import { sessionTimings } from '../core/timings';

export interface Exchange {
  /** When the request was handed to the client (a lower bound of when it reached a server). */
  sentAt: number;
  /** When its answer came back (an upper bound of when the server handled it). */
  answeredAt: number;
}

/** Answered exchanges kept per connection: enough to credit a write; older ones only ever lose to newer ones. */
const KEPT = 64;

export class SessionTrust {
  /** A lower bound, on our clock, of the leader's latest touch of the session. */
  private leaderTouchedAt = -Infinity;
  /** Send time of the latest request any server answered: while this is recent, some server still hears us. */
  private heardSentAt = -Infinity;
  /** Exchanges answered on the current connection, oldest first; empty while disconnected. */
  private onConnection: Exchange[] = [];
  /** Touches the follower has reported (by `reportedBy`) but no later confirmed write has shown delivered. */
  private reported: { touchedAt: number; reportedBy: number }[] = [];

  constructor(private readonly timeoutMs: () => number) {}

  /**
   * The session was established (created by the leader) or re-established (revalidated by the leader) by a
   * connect attempt that started at `sentAt`: the leader touched it after that.
   */
  connected(exchange: Exchange): void {
    this.onConnection = [exchange];
    this.reported = [];
    this.leaderTouchedAt = Math.max(this.leaderTouchedAt, exchange.sentAt);
    this.heardSentAt = Math.max(this.heardSentAt, exchange.sentAt);
  }

  /** What the old connection's server heard need not have reached the leader: a new connection starts afresh. */
  disconnected(): void {
    this.onConnection = [];
    this.reported = [];
  }

  /** A request answered by whichever server we are connected to (a read): it extends nothing by itself. */
  answered(exchange: Exchange): void {
    this.heardSentAt = Math.max(this.heardSentAt, exchange.sentAt);
    this.onConnection.push(exchange);
    if (this.onConnection.length > KEPT) this.onConnection.shift();
  }

  /** A write the leader answered (applied, or refused on a version or existence check). */
  confirmedByLeader(exchange: Exchange): void {
    // Reports sent before this write was: the follower forwarded it behind them, and the leader accepted it.
    for (const r of this.reported)
      if (r.reportedBy <= exchange.sentAt) this.leaderTouchedAt = Math.max(this.leaderTouchedAt, r.touchedAt);
    this.reported = this.reported.filter((r) => r.reportedBy > exchange.sentAt);
    // Requests answered a ping period before this write was sent: reported by the time its answer came.
    const before = exchange.sentAt - sessionTimings(this.timeoutMs()).leaderPingGapMs;
    let touchedAt = -Infinity;
    for (const earlier of this.onConnection)
      if (earlier.answeredAt <= before) touchedAt = Math.max(touchedAt, earlier.sentAt);
    if (touchedAt > this.leaderTouchedAt) this.reported.push({ touchedAt, reportedBy: exchange.answeredAt });
    this.answered(exchange);
  }

  /** Until when the leader cannot have expired the session, less the margin. */
  trustedUntil(): number {
    const timeout = this.timeoutMs();
    return this.leaderTouchedAt + timeout - sessionTimings(timeout).trustMarginMs;
  }

  /**
   * After this, no server has answered anything sent within a session timeout: the session is as good as
   * expired (the leader may well have expired it; we cannot learn it without a server), so give it up.
   */
  givenUpAt(): number {
    return Math.max(this.heardSentAt, this.leaderTouchedAt) + sessionTimings(this.timeoutMs()).giveUpAfterMs;
  }

  /** When the current connection last answered anything (-Infinity while disconnected). */
  lastAnsweredAt(): number {
    let latest = -Infinity;
    for (const e of this.onConnection) latest = Math.max(latest, e.answeredAt);
    return latest;
  }
}
