/**
 * Every timing the spout derives from its settings, in one place, each with the reason for its value.
 * Plain numbers in, plain numbers out, so that coordination/ and spout/ read the same figures. Where a
 * session is open, its timeout is the one the server granted (it may clamp the one asked for).
 *
 * How fast a dead task's shards move (the sum a reader of the manual asks for): ZooKeeper's leader
 * expires the dead task's session a session timeout after it last heard from it (rounded up to the
 * ensemble's tickTime), which deletes its leases; the other tasks' lease watches fire at once and their
 * next assignment round takes the shards (without a watch, the rebalance timer finds them within
 * `rebalanceIntervalMs`), then reads each from its checkpoint. So: within sessionTimeoutMs + tickTime +
 * rebalanceIntervalMs, usually just past sessionTimeoutMs. A task that stops cleanly deletes its leases at
 * once, after waiting up to `handoffTimeoutMs` for its in-flight acks.
 */

/** Share of the session timeout within which the leader pings each follower (tickTime / 2 <= timeout / 4). */
const LEADER_PING_SHARE = 1 / 4;
/** Share of the session timeout kept as a safety margin on lease trust (clock rates, acting on a just-checked deadline). */
const TRUST_MARGIN_SHARE = 1 / 10;

export interface SessionTimings {
  /** Every ZooKeeper request settles within this: a reply any later could come from a session already expired. */
  requestTimeoutMs: number;
  /** A first connect that got no session within this fails (retriable); the caller diagnoses why. */
  connectTimeoutMs: number;
  /**
   * How often a write the leader must confirm is sent: trust grows only from such confirmations, each
   * crediting a request answered about three periods earlier, so a seventh keeps the trust deadline at
   * least a third of the timeout ahead of now (sessionTrust.ts). Never under 100 ms.
   */
  heartbeatEveryMs: number;
  /** How often the watchdog looks for a silent connection or a session nobody answers: a tenth, at least 50 ms. */
  watchdogEveryMs: number;
  /** A connection that answered nothing this long while a request waits is abandoned (as the Java client's read timeout). */
  stalledAfterMs: number;
  /** How long a closing session waits for the server to hear CLOSE_SESSION before its socket is dropped. */
  closeGraceMs: number;
  /** Longest gap between the leader's pings to a follower: a write sent that long after a read was answered proves the read reached the leader. */
  leaderPingGapMs: number;
  /** Lease trust ends this much before the leader can expire the session. */
  trustMarginMs: number;
  /** No server answered anything sent within this: the session is as good as expired, so it is given up. */
  giveUpAfterMs: number;
}

export function sessionTimings(sessionTimeoutMs: number): SessionTimings {
  return {
    requestTimeoutMs: sessionTimeoutMs,
    connectTimeoutMs: sessionTimeoutMs,
    heartbeatEveryMs: Math.max(100, Math.floor(sessionTimeoutMs / 7)),
    watchdogEveryMs: Math.max(50, Math.floor(sessionTimeoutMs / 10)),
    stalledAfterMs: (sessionTimeoutMs * 2) / 3,
    closeGraceMs: Math.min(1000, sessionTimeoutMs / 2),
    leaderPingGapMs: sessionTimeoutMs * LEADER_PING_SHARE,
    trustMarginMs: sessionTimeoutMs * TRUST_MARGIN_SHARE,
    giveUpAfterMs: sessionTimeoutMs,
  };
}

/**
 * Bound on a whole join (connect, layout, stream identity, listing, bootstrap, membership): three session
 * timeouts for the ZooKeeper part, and never under a minute, for two Kinesis calls of up to the SDK's 30 s
 * request timeout. A join past it closes its session and starts over.
 */
export function joinTimeoutMs(sessionTimeoutMs: number): number {
  return Math.max(60_000, 3 * sessionTimeoutMs);
}

/**
 * For this long after joining, tasks the topology declares but that have not joined yet count as members,
 * so that the first task of a deploy does not take every shard and hand most back: long enough for tasks
 * started together to join, short enough that the share of a task that never comes is not left unread long.
 */
export function startGraceMs(sessionTimeoutMs: number): number {
  return sessionTimeoutMs;
}

/** The period of the look for new shards: `shardSyncIntervalMs` give or take 20% (`random` in [0, 1)), so that tasks do not list in step. */
export function shardSyncEveryMs(shardSyncIntervalMs: number, random: number): number {
  return shardSyncIntervalMs * (0.8 + random * 0.4);
}

/** Every this many looks for new shards, a full listing instead: the only kind that may show a shard expired. */
export const FULL_LISTING_EVERY = 5;

/**
 * How often the watched copies of leases/, finished/, members/ and ended/ are read again in full, jittered
 * (0.8 to 1.2 times): a check that no watch was missed, on top of the resync at every reconnect.
 */
export function folderResyncEveryMs(random: number): number {
  return 5 * 60_000 * (0.8 + random * 0.4);
}
