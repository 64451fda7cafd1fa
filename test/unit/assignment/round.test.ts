/** The assignment round through injected collaborators: shares, start grace, hand-over, reconcile, loops, listings. */
import { testConfig } from '../fakes/testConfig';
import {
  AssignmentRound,
  MOST_TAKES_AT_ONCE,
  type RoundSession,
  TAKES_AT_ONCE,
  WATCH_COALESCE_MS,
} from '../../../src/assignment/round';
import { planLeases } from '../../../src/assignment/byCount';
import { PUBLISH_EVERY_MS } from '../../../src/assignment/holderCounts';
import { Reporter } from '../../../src/core/log';
import { ShardListing } from '../../../src/assignment/listing';
import { ManualClock } from '../fakes/manualClock';
import { RecordingLogger } from '../fakes/recordingLogger';
import {
  shard,
  TestCoordinationState,
  TestHeldShards,
  type TestShard,
  TestStream,
  testSession,
} from '../fakes/roundFakes';

const ME = 'task0-a';
const OTHER = 'task1-b';

function setup(options: { taskCount?: number; shards?: number; topology?: string } = {}) {
  const clock = new ManualClock();
  const logger = new RecordingLogger();
  const reporter = new Reporter(logger, clock);
  const state = new TestCoordinationState(ME);
  const held = new TestHeldShards();
  const stream = new TestStream(...Array.from({ length: options.shards ?? 4 }, (_, i) => shard(`s-${i}`)));
  const listing = new ShardListing(stream, () => clock.now(), 30_000);
  let session: RoundSession | undefined = testSession(state);
  const config = testConfig();
  const presence = { topology: options.topology ?? 'blue-1-1', active: true, standby: false };
  const round = new AssignmentRound<RoundSession, TestShard>({
    config,
    scheduler: clock,
    reporter,
    streamLabel: 'stream s in us-east-1',
    taskCount: options.taskCount ?? 1,
    held,
    listing,
    session: () => session,
    streamStillHolds: async () => true,
    listed: () => undefined,
    mayRead: () => presence.active,
    stopping: () => false,
    presence,
    throttled: () => undefined,
  });
  const runRound = async () => {
    round.schedule();
    await round.idle();
  };
  const loseSession = () => {
    session = undefined;
  };
  return { clock, logger, state, held, stream, listing, round, runRound, loseSession, presence };
}

describe('AssignmentRound', () => {
  it('takes its share of the free shards among the members', async () => {
    const { state, held, runRound, round } = setup();
    state.setOtherMembers(OTHER);
    await runRound();
    expect(held.started).toHaveLength(2);
    expect(round.membersSharing).toBe(2);
    expect(state.acquired).toEqual(held.started);
  });

  it('reads a child only once its parents are finished', async () => {
    const { state, held, stream, runRound } = setup();
    stream.setShards(shard('s-0', [], true), shard('s-1', ['s-0']));
    await runRound();
    expect(held.started).toEqual(['s-0']);
    state.finished.add('s-0');
    await runRound();
    expect(held.started).toEqual(['s-0', 's-1']);
  });

  it('counts the tasks the topology declares during the start grace, and only then', async () => {
    const { clock, held, runRound, round } = setup({ taskCount: 4 });
    await runRound();
    expect(held.started).toHaveLength(1);
    expect(round.membersSharing).toBe(4);
    await clock.advance(10_000);
    await runRound();
    expect(held.started).toHaveLength(4);
    // What the checkpoint writes' share is taken from.
    expect(round.membersSharing).toBe(1);
  });

  it('hands over what is beyond its share when a member joins', async () => {
    const { state, held, runRound } = setup();
    await runRound();
    expect(held.byId.size).toBe(4);
    state.setOtherMembers(OTHER);
    await runRound();
    expect(held.handedOver).toHaveLength(2);
  });

  it('looks for the checkpoint first of a shard it saw leased before (a failover), not of a new one', async () => {
    const { state, held, stream, listing, runRound } = setup({ shards: 4 });
    state.setOtherMembers(OTHER);
    for (const id of ['s-0', 's-1', 's-2', 's-3']) state.setLeaseHeldBy(id, OTHER);
    await runRound();
    expect(held.started).toEqual([]);
    // The other task dies: its leases go with its session; a new shard comes.
    for (const id of ['s-0', 's-1', 's-2', 's-3']) state.leases.delete(id);
    stream.setShards(...['s-0', 's-1', 's-2', 's-3', 's-4'].map((id) => shard(id)));
    listing.relist();
    state.setOtherMembers();
    await runRound();
    expect([...held.started].sort()).toEqual(['s-0', 's-1', 's-2', 's-3', 's-4']);
    expect([...held.startedLeasedBefore].sort()).toEqual(['s-0', 's-1', 's-2', 's-3']);
  });

  it('stops a shard whose lease is no longer ours, and drains one the stream stopped listing', async () => {
    const { state, held, stream, listing, runRound, logger } = setup({ shards: 2 });
    await runRound();
    state.setLeaseHeldBy('s-0', OTHER);
    stream.setShards(shard('s-0'));
    listing.relist();
    await runRound();
    expect(held.forgotten).toEqual(['s-0']);
    expect(held.drained).toEqual(['s-1']);
    expect(logger.said('s-1 is not in the stream any more')).toBe(true);
  });

  it('reads a lease of its own that it does not hold (a lost reply), and gives back one it does not want', async () => {
    const { state, held, stream, runRound } = setup({ shards: 1 });
    stream.setShards(shard('s-0'), shard('s-1', [], true), shard('s-2', ['s-1']));
    state.setLeaseHeldBy('s-0', ME);
    state.setLeaseHeldBy('s-2', ME);
    await runRound();
    expect(held.started).toContain('s-0');
    expect(state.acquired).not.toContain('s-0');
    // s-2's parent is not finished: not readable, so its lease goes back.
    expect(state.leases.has('s-2')).toBe(false);
  });

  it('leaves alone a shard the held shards back off from (a failed start, a take/release loop)', async () => {
    const { clock, held, state, runRound } = setup({ shards: 2 });
    held.setBackingOff('s-0');
    for (let i = 0; i < 10; i += 1) {
      await runRound();
      await clock.advance(100);
    }
    expect(held.started).toEqual(['s-1']);
    expect(state.acquired).not.toContain('s-0');
    held.setBackingOff('s-0', false);
    await runRound();
    expect(held.started).toContain('s-0');
  });

  it('lists once for a lease on an unlisted shard, not once per round', async () => {
    const { clock, state, stream, runRound } = setup();
    await runRound();
    state.setLeaseHeldBy('s-expired', OTHER);
    const before = stream.fullListings;
    for (let i = 0; i < 30; i += 1) {
      await runRound();
      await clock.advance(1_000);
    }
    // 1, then after 1, 2, 4, 8, 16 s: six listings in 30 rounds.
    expect(stream.fullListings - before).toBeLessThanOrEqual(6);
    expect(stream.fullListings - before).toBeGreaterThanOrEqual(1);
  });

  it('runs one round at a time, and one more for the asks made during it', async () => {
    const { clock, state, round } = setup();
    round.schedule();
    round.schedule();
    round.schedule();
    await round.idle();
    expect(state.rounds).toBe(2);
    // A watch firing asks for a round, once what else the watches bring within WATCH_COALESCE_MS has come.
    state.fireWatches();
    state.fireWatches();
    await clock.advance(WATCH_COALESCE_MS - 1);
    await round.idle();
    expect(state.rounds).toBe(2);
    await clock.advance(1);
    await round.idle();
    expect(state.rounds).toBe(3);
  });

  it('takes every shard it is owed in one round, several at a time, more as its creates succeed', async () => {
    const { state, held, runRound } = setup({ shards: 60 });
    const acquire = state.acquireLease.bind(state);
    let inFlight = 0;
    let most = 0;
    state.acquireLease = async (shardId) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
      return acquire(shardId);
    };
    await runRound();
    expect(state.rounds).toBe(1);
    expect(held.started).toHaveLength(60);
    expect(most).toBeGreaterThan(TAKES_AT_ONCE);
    expect(most).toBeLessThanOrEqual(MOST_TAKES_AT_ONCE);
  });

  it('ends a round whose creates keep being refused (a stale view) and takes its share in the next one', async () => {
    const { clock, round, state, held, runRound } = setup({ shards: 40 });
    state.setOtherMembers(OTHER);
    // Another task takes, as this round starts, the 20 shards this one would try first (its creates fire the
    // leases watch, as ZooKeeper's do).
    const mine = planLeases({
      readable: Array.from({ length: 40 }, (_, i) => `s-${i}`),
      leases: new Map(),
      members: [ME, OTHER],
      me: ME,
    });
    const acquire = state.acquireLease.bind(state);
    let refused = 0;
    state.acquireLease = async (shardId) => {
      if (state.leases.size === 0) {
        for (const s of mine.candidates.slice(0, 20)) state.leases.set(s, OTHER);
        state.fireWatches();
      }
      const taken = await acquire(shardId);
      if (!taken) refused += 1;
      return taken;
    };
    await runRound();
    await clock.advance(WATCH_COALESCE_MS);
    await round.idle();
    expect(held.started).toHaveLength(20);
    expect(state.rounds).toBe(2);
    // Walking the stale list to its end: 20 refused creates. With it cut short: TAKES_AT_ONCE, plus at most
    // one more for each of the other takes in flight when the last of those came back.
    expect(refused).toBeLessThan(2 * TAKES_AT_ONCE);
  });

  it('tries a failed round again soon, without a watch or the periodic round, waiting longer each time', async () => {
    const { clock, state, held, round } = setup();
    const read = state.finishedShards.bind(state);
    let failing = 2;
    state.finishedShards = async (watch) => {
      if (failing > 0) {
        failing -= 1;
        state.rounds += 1;
        throw new Error('connection loss');
      }
      return read(watch);
    };
    round.schedule();
    await round.idle();
    expect(state.rounds).toBe(1);
    // The first wait is 200 ms (jittered; the test clock's jitter is the middle of the range).
    await clock.advance(199);
    expect(state.rounds).toBe(1);
    await clock.advance(1);
    await round.idle();
    expect(state.rounds).toBe(2);
    await clock.advance(399);
    expect(state.rounds).toBe(2);
    await clock.advance(1);
    await round.idle();
    expect(held.started).toHaveLength(4);
  });

  it('does nothing without a session', async () => {
    const { held, stream, runRound, loseSession } = setup();
    loseSession();
    await runRound();
    expect(held.started).toEqual([]);
    expect(stream.fullListings).toBe(0);
  });
});

describe('AssignmentRound with two topologies of one application', () => {
  const GREEN = 'task0-green';

  it('deactivated beside an active topology: hands every lease over, takes nothing, and says so in its node', async () => {
    const { state, held, runRound, presence } = setup();
    await runRound();
    expect(held.byId.size).toBe(4);
    state.setPresence(GREEN, { topology: 'green-2-2', active: true, standby: false });
    state.setOtherMembers(GREEN);
    presence.active = false;
    await runRound();
    expect(held.handedOver.sort()).toEqual(['s-0', 's-1', 's-2', 's-3']);
    expect(state.memberWrites.at(-1)).toEqual({ topology: 'blue-1-1', active: false, standby: true });
  });

  it('deactivated with no other topology (storm rebalance, storm deactivate): keeps its leases', async () => {
    const { state, held, runRound, presence } = setup();
    await runRound();
    state.setPresence(OTHER, { topology: 'blue-1-1', active: false, standby: false });
    state.setOtherMembers(OTHER);
    presence.active = false;
    await runRound();
    expect(held.handedOver).toEqual([]);
    expect(held.byId.size).toBe(4);
    expect(state.memberWrites.at(-1)).toEqual({ topology: 'blue-1-1', active: false, standby: false });
  });

  it('active beside a topology that gave way: shares among the reading members only', async () => {
    const { state, held, runRound, round } = setup({ topology: 'green-2-2' });
    state.setPresence(OTHER, { topology: 'blue-1-1', active: false, standby: false });
    state.setOtherMembers(OTHER);
    await runRound();
    expect(held.started).toHaveLength(4);
    expect(round.membersSharing).toBe(1);
  });

  it('reactivated after giving way: takes nothing back until the other topology is gone', async () => {
    const { state, held, runRound, presence } = setup();
    state.setPresence(GREEN, { topology: 'green-2-2', active: true, standby: false });
    state.setOtherMembers(GREEN);
    presence.active = false;
    await runRound();
    presence.active = true;
    await runRound();
    expect(held.started).toEqual([]);
    expect(presence.standby).toBe(true);
    state.setOtherMembers();
    await runRound();
    expect(presence.standby).toBe(false);
    expect(held.started).toHaveLength(4);
  });

  it('the first of the members that share publishes the lease counts, not one that gave way and sorts first', async () => {
    const { clock, state, held, runRound } = setup({ topology: 'green-2-2' });
    const givenWay = 'task0-0';
    expect([givenWay, ME].sort()[0]).toBe(givenWay);
    state.setPresence(givenWay, { topology: 'blue-1-1', active: false, standby: true });
    state.setOtherMembers(givenWay);
    await runRound();
    expect(held.started).toHaveLength(4);
    // Each round publishes what it read before it took: the next one says what this one took.
    expect(state.countWrites.at(-1)).toEqual(new Map([[ME, 0]]));
    await clock.advance(PUBLISH_EVERY_MS);
    await runRound();
    expect(state.countWrites.at(-1)).toEqual(new Map([[ME, 4]]));
  });

  it('counts a member node of an older release (no topology fields) as reading, of another topology', async () => {
    const { state, held, runRound, presence } = setup();
    await runRound();
    state.setOtherMembers(OTHER);
    presence.active = false;
    await runRound();
    expect(held.handedOver).toHaveLength(4);
  });
});
