/** What a process may conclude about its session's expiry from what it sent and what came back (defect 9). */
import { SessionTrust } from '../../../src/coordination/sessionTrust';

const TIMEOUT = 3_000;
const MARGIN = TIMEOUT / 10;
const PROPAGATION = TIMEOUT / 3;

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

test('a write the leader confirmed credits the latest request answered a propagation delay before it was sent, not itself', () => {
  const trust = connectedAt(0);
  trust.answered({ sentAt: 2_000, answeredAt: 2_010 });
  trust.answered({ sentAt: 3_000, answeredAt: 3_010 });
  trust.confirmedByLeader({ sentAt: 3_500, answeredAt: 3_520 });
  // 3_000 was answered less than PROPAGATION before 3_500: its touch may not have reached the leader yet.
  expect(2_010).toBeLessThanOrEqual(3_500 - PROPAGATION);
  expect(3_010).toBeGreaterThan(3_500 - PROPAGATION);
  expect(trust.trustedUntil()).toBe(2_000 + TIMEOUT - MARGIN);
  // Confirmed writes are themselves candidates for later ones.
  trust.confirmedByLeader({ sentAt: 5_000, answeredAt: 5_010 });
  expect(trust.trustedUntil()).toBe(3_500 + TIMEOUT - MARGIN);
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
  trust.connected({ sentAt: 1_500, answeredAt: 1_900 });
  trust.confirmedByLeader({ sentAt: 3_000, answeredAt: 3_010 });
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
