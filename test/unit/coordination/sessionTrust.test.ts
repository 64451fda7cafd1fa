/** What a process may conclude about its session's expiry from what it sent and what came back (defect 9). */
import { SessionTrust } from '../../../src/coordination/sessionTrust';

const TIMEOUT = 3_000;
const MARGIN = TIMEOUT / 10;
const PROPAGATION = TIMEOUT / 4;

function connectedAt(sentAt: number, answeredAt = sentAt + 5): SessionTrust {
  const trust = new SessionTrust(() => TIMEOUT);
  trust.connected({ sentAt, answeredAt });
  return trust;
}

test('a new or revalidated session is trusted from the start of the connect attempt (the leader touched it after)', () => {
  expect(connectedAt(1_000).trustedUntil()).toBe(1_000 + TIMEOUT - MARGIN);
});

test('answered reads extend nothing: a follower cut off from the leader keeps answering them', () => {
  const trust = connectedAt(0);
  for (let t = 100; t < 10_000; t += 100) trust.answered({ sentAt: t, answeredAt: t + 5 });
  expect(trust.trustedUntil()).toBe(TIMEOUT - MARGIN);
});

test('a confirmed write credits a request answered a ping period before it, once a later confirmed write shows the report delivered', () => {
  const trust = connectedAt(0);
  trust.answered({ sentAt: 1_000, answeredAt: 1_010 });
  trust.answered({ sentAt: 2_000, answeredAt: 2_010 });
  // 2_010 + PROPAGATION > 2_500: only the read answered at 1_010 had been reported when this write was answered.
  trust.confirmedByLeader({ sentAt: 2_500, answeredAt: 2_520 });
  expect(trust.trustedUntil()).toBe(TIMEOUT - MARGIN);
  // Sent before that answer: it may have overtaken the report.
  trust.confirmedByLeader({ sentAt: 2_510, answeredAt: 2_530 });
  expect(trust.trustedUntil()).toBe(TIMEOUT - MARGIN);
  // Sent after it: the report went to the leader first.
  trust.confirmedByLeader({ sentAt: 2_600, answeredAt: 2_620 });
  expect(trust.trustedUntil()).toBe(1_000 + TIMEOUT - MARGIN);
  // Nor does a write ever credit itself: 2_600 is credited only by writes that come later still.
  expect(2_600 - PROPAGATION).toBeLessThan(2_010);
  trust.confirmedByLeader({ sentAt: 3_500, answeredAt: 3_510 });
  trust.confirmedByLeader({ sentAt: 3_600, answeredAt: 3_610 });
  expect(trust.trustedUntil()).toBe(2_600 + TIMEOUT - MARGIN);
});

test('steady heartbeats keep trust ahead of now by about a third of the timeout', () => {
  const every = TIMEOUT / 7;
  const trust = connectedAt(0);
  let lowestLead = Infinity;
  for (let t = every; t < 10 * TIMEOUT; t += every) {
    lowestLead = Math.min(lowestLead, trust.trustedUntil() - t);
    trust.confirmedByLeader({ sentAt: t, answeredAt: t + 20 });
  }
  expect(lowestLead).toBeGreaterThan(TIMEOUT * 0.3);
});

test('a write confirmed before anything aged enough credits nothing new', () => {
  const trust = connectedAt(0, 10);
  trust.confirmedByLeader({ sentAt: 200, answeredAt: 210 });
  expect(trust.trustedUntil()).toBe(TIMEOUT - MARGIN);
});

test('what the previous connection heard is not credited after a reconnect; the reconnect itself is', () => {
  const trust = connectedAt(0);
  trust.answered({ sentAt: 1_000, answeredAt: 1_010 });
  trust.disconnected();
  trust.confirmedByLeader({ sentAt: 1_010 + PROPAGATION, answeredAt: 1_010 + PROPAGATION + 10 });
  trust.disconnected();
  // The touch of 1_000, reported on the old connection, is never shown delivered.
  trust.connected({ sentAt: 1_500, answeredAt: 1_900 });
  trust.confirmedByLeader({ sentAt: 3_000, answeredAt: 3_010 });
  trust.confirmedByLeader({ sentAt: 3_100, answeredAt: 3_110 });
  expect(trust.trustedUntil()).toBe(1_500 + TIMEOUT - MARGIN);
});

test('trust never moves back, whatever order answers come in', () => {
  const trust = connectedAt(0);
  for (let t = 500; t <= 5_000; t += 500) trust.confirmedByLeader({ sentAt: t, answeredAt: t + 10 });
  const before = trust.trustedUntil();
  trust.confirmedByLeader({ sentAt: 600, answeredAt: 6_000 });
  expect(trust.trustedUntil()).toBe(before);
});

test('the session is given up a session timeout after the last answered send, reads included', () => {
  const trust = connectedAt(0);
  trust.answered({ sentAt: 4_000, answeredAt: 4_010 });
  expect(trust.givenUpAt()).toBe(4_000 + TIMEOUT);
  trust.disconnected();
  expect(trust.givenUpAt()).toBe(4_000 + TIMEOUT);
  expect(trust.lastAnsweredAt()).toBe(-Infinity);
});
