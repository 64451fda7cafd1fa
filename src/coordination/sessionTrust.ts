/**
 * How long this process may trust that ZooKeeper has not expired its session, from its own monotonic clock
 * and what the servers answered. Pure bookkeeping: the caller says what was sent when and what came back.
 *
 * Only the leader expires sessions. It re-arms a session's expiry (last touch + timeout, rounded up to a tick)
 * when it creates or revalidates the session itself, and when a follower reports that the client was heard;
 * a follower reports the sessions it heard from in its answer to the leader's ping, every tickTime / 2.
 * A follower cut off from the leader goes on answering reads for up to syncLimit x tickTime, while the leader
 * expires the session: so an answered read proves nothing, and neither does the time a write was sent (the
 * leader handles a forwarded write without touching the session). What a write answered by the leader does
 * prove is that the follower's link to the leader carried everything the follower sent before forwarding
 * it, among which its ping answers: every request that this connection had answered PROPAGATION before the
 * write was sent had been reported to the leader, and the leader touched the session after that request was
 * sent. Hence: the latest such request's send time + timeout is a time before which the leader cannot expire
 * the session.
 *
 * Clock assumptions that remain:
 * - our clock is monotonic (performance.now) and runs at the rate of the leader's clock, give or take the
 *   margin (a tenth of the timeout, far above any real drift between two clocks over one session timeout);
 * - tickTime <= session timeout / 2, which holds unless minSessionTimeout is configured below its default of
 *   2 x tickTime, so a follower reports touches at least every timeout / 4 (PROPAGATION leaves slack above);
 * - the session timeout is the one the server granted, or the one asked for when smaller;
 * - a process paused after checking trustedUntil() acts on a stale answer: the caller checks right before
 *   acting, and the margin is all the slack there is.
 */
export interface Exchange {
  /** When the request was handed to the client (a lower bound of when it reached a server). */
  sentAt: number;
  /** When its answer came back (an upper bound of when the server handled it). */
  answeredAt: number;
}

/** How far back a follower's ping answers may lag behind what it heard, as a share of the session timeout. */
const PROPAGATION_SHARE = 1 / 3;
/** Safety margin, as a share of the session timeout (clock rates, the caller acting on a just-checked deadline). */
const MARGIN_SHARE = 1 / 10;
/** Answered exchanges kept per connection: enough to credit a write; older ones only ever lose to newer ones. */
const KEPT = 64;

export class SessionTrust {
  /** A lower bound, on our clock, of the leader's latest touch of the session. */
  private leaderTouchedAt = -Infinity;
  /** Send time of the latest request any server answered: while this is recent, some server still hears us. */
  private heardSentAt = -Infinity;
  /** Exchanges answered on the current connection, oldest first; empty while disconnected. */
  private onConnection: Exchange[] = [];

  constructor(private readonly timeoutMs: () => number) {}

  /**
   * The session was established (created by the leader) or re-established (revalidated by the leader) by a
   * connect attempt that started at `sentAt`: the leader touched it after that.
   */
  connected(exchange: Exchange): void {
    this.onConnection = [exchange];
    this.leaderTouchedAt = Math.max(this.leaderTouchedAt, exchange.sentAt);
    this.heardSentAt = Math.max(this.heardSentAt, exchange.sentAt);
  }

  /** What the old connection's server heard need not have reached the leader: a new connection starts afresh. */
  disconnected(): void {
    this.onConnection = [];
  }

  /** A request answered by whichever server we are connected to (a read): it extends nothing by itself. */
  answered(exchange: Exchange): void {
    this.heardSentAt = Math.max(this.heardSentAt, exchange.sentAt);
    this.onConnection.push(exchange);
    if (this.onConnection.length > KEPT) this.onConnection.shift();
  }

  /** A write the leader answered (applied, or refused on a version or existence check). */
  confirmedByLeader(exchange: Exchange): void {
    const reportedBy = exchange.sentAt - this.timeoutMs() * PROPAGATION_SHARE;
    for (const earlier of this.onConnection) {
      if (earlier.answeredAt <= reportedBy) this.leaderTouchedAt = Math.max(this.leaderTouchedAt, earlier.sentAt);
    }
    this.answered(exchange);
  }

  /** Until when the leader cannot have expired the session, less the margin. */
  trustedUntil(): number {
    const timeout = this.timeoutMs();
    return this.leaderTouchedAt + timeout - timeout * MARGIN_SHARE;
  }

  /**
   * After this, no server has answered anything sent within a session timeout: the session is as good as
   * expired (the leader may well have expired it; we cannot learn it without a server), so give it up.
   */
  givenUpAt(): number {
    return Math.max(this.heardSentAt, this.leaderTouchedAt) + this.timeoutMs();
  }

  /** When the current connection last answered anything (-Infinity while disconnected). */
  lastAnsweredAt(): number {
    let latest = -Infinity;
    for (const e of this.onConnection) latest = Math.max(latest, e.answeredAt);
    return latest;
  }
}
