/**
 * Defect 9 on a real three-server ensemble: a follower cut off from the leader keeps answering reads for
 * syncLimit x tickTime while the leader expires the session. A client connected to that follower only must
 * stop trusting its session before the leader deletes its ephemeral nodes.
 */
import { ZkSession } from '../../src/coordination/zk';
import { SpoutError } from '../../src/errors';
import { waitFor } from '../helpers/fixture';
import { startZooKeeperEnsemble, type ZooKeeperEnsemble } from '../helpers/zookeeperServer';

const SESSION_TIMEOUT_MS = 4_000;
/** The follower serves for syncLimit x tickTime (8 s) after the cut: well past the session timeout. */
const TICK_MS = 200;
const SYNC_LIMIT = 40;
/** How long to watch after the cut: past the leader's expiry, short of the follower giving up. */
const WATCH_MS = 7_000;

let ensemble: ZooKeeperEnsemble | undefined;
const sessions: ZkSession[] = [];

afterAll(async () => {
  for (const s of sessions) s.close();
  await ensemble?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function open(
  connect: string,
  extra: { heartbeatEveryMs?: number; requestTimeoutMs?: number } = {},
): Promise<ZkSession> {
  const session = await ZkSession.connect({ connect, sessionTimeoutMs: SESSION_TIMEOUT_MS, ...extra }, 10_000);
  sessions.push(session);
  return session;
}

interface Sample {
  at: number;
  trustedUntil: number;
}
interface Read {
  sentAt: number;
  exists: boolean;
}

test('cut off from the leader, a follower answers reads, yet trust stops and runs out before the leader expires the session', async () => {
  ensemble = await startZooKeeperEnsemble({ isolatable: 1, tickTime: TICK_MS, initLimit: 25, syncLimit: SYNC_LIMIT });
  const [follower, ...others] = ensemble.members;
  expect(await follower.mode()).toBe('follower');

  const holder = await open(follower.connectString);
  // Another session on the same follower that only reads (no heartbeat: a write stuck at the follower
  // would hold back that session's later reads, ZooKeeper answering each session in order).
  const reader = await open(follower.connectString, { heartbeatEveryMs: 1e9, requestTimeoutMs: 1_000 });
  const writer = await open(follower.connectString, { heartbeatEveryMs: 1e9, requestTimeoutMs: 1_500 });
  const observer = await open(others.map((m) => m.connectString).join(','));

  expect(await holder.create('/lease', Buffer.from('held'), 'ephemeral')).toBe('created');
  // The observer's server may be the member that has not applied the create yet (ZooKeeper reads are not
  // linearizable, and this client has no `sync`): wait until it shows there.
  await waitFor('the lease at the observer', () => observer.getData('/lease'), 5_000);
  await sleep(1_500);
  expect(holder.trustedUntil()).toBeGreaterThan(performance.now());

  await writer.getData('/'); // answered just now: the writer's session is not given up before its check's bound
  const trustAtCut = holder.trustedUntil();
  const cutAt = performance.now();
  ensemble.cutOff();

  // A single version check in a multi is a quorum write: the cut-off follower cannot get it committed.
  const check = writer.transaction([{ op: 'check', path: '/', version: -1 }]).then(
    () => 'committed',
    (err: unknown) => (err instanceof SpoutError && err.retriable ? 'no reply' : `failed: ${String(err)}`),
  );

  const samples: Sample[] = [];
  const followerReads: Read[] = [];
  const leaderReads: Read[] = [];
  const sampling = (async () => {
    while (performance.now() - cutAt < WATCH_MS) {
      samples.push({ at: performance.now(), trustedUntil: holder.trustedUntil() });
      await sleep(50);
    }
  })();
  const readLoop = async (session: ZkSession, into: Read[]) => {
    while (performance.now() - cutAt < WATCH_MS) {
      const sentAt = performance.now();
      const node = await session.getData('/lease').then(
        (n) => n,
        () => 'no answer' as const,
      );
      if (node !== 'no answer') into.push({ sentAt, exists: node !== undefined });
      await sleep(100);
    }
  };
  await Promise.all([sampling, readLoop(reader, followerReads), readLoop(observer, leaderReads)]);

  expect(await check).toBe('no reply');

  // Trust stopped advancing at the cut, and ran out within the session timeout.
  expect(Math.max(...samples.map((s) => s.trustedUntil))).toBeLessThanOrEqual(trustAtCut + 500);
  const lost = samples.find((s) => s.trustedUntil <= s.at);
  expect(lost).toBeDefined();
  expect(lost!.at - cutAt).toBeLessThan(SESSION_TIMEOUT_MS);

  // Meanwhile the follower still answered reads, and still showed the lease...
  expect(followerReads.filter((r) => r.sentAt > lost!.at).length).toBeGreaterThan(0);
  // ...which the leader deleted when it expired the session: only after trust had run out.
  const goneAtLeader = leaderReads.find((r) => !r.exists);
  expect(goneAtLeader).toBeDefined();
  expect(goneAtLeader!.sentAt).toBeGreaterThan(lost!.at);
  expect(followerReads.some((r) => r.exists && r.sentAt > goneAtLeader!.sentAt)).toBe(true);
  expect(holder.connectionState).not.toBe('connected');
});
