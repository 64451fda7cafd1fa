/** The executor through a fake world that says what the world does (a write refused, a reply lost), not how. */
import { LogLevel } from '../../../src/core/log';
import type { ShardNode } from '../../../src/core/shard';
import { execute, type LetGo, type LifecycleShard, type ShardWorld } from '../../../src/held/executor';
import type { ReadPosition, ShardEvent, ShardPhase } from '../../../src/held/lifecycle';

class TestShard implements LifecycleShard {
  phase: ShardPhase = { kind: 'starting' };
  constructor(readonly shardId = 'shardId-000000000001') {}
  enter(phase: ShardPhase): void {
    this.phase = phase;
  }
}

/** A world that records what was done to it, in order, and fails or refuses what a test tells it to. */
class FakeWorld implements ShardWorld<TestShard> {
  clock = 0;
  readonly done: string[] = [];
  readonly warnings: string[] = [];
  private refuseShardEnd = false;
  private failing = new Set<string>();
  /** Resolves the SHARD_END write a test holds back. */
  private heldShardEnd: (() => void) | undefined;
  private holdShardEnd = false;

  setShouldRefuseNextShardEnd(): void {
    this.refuseShardEnd = true;
  }

  /** The next write of this kind fails (a lost connection, its outcome unknown). */
  setShouldFailNext(write: 'checkpoint' | 'shardEnd' | 'lease' | 'ended'): void {
    this.failing.add(write);
  }

  setShouldHoldShardEnd(): void {
    this.holdShardEnd = true;
  }

  releaseHeldShardEnd(): void {
    this.heldShardEnd?.();
  }

  private async write(kind: string, what: string): Promise<void> {
    this.done.push(what);
    if (this.failing.delete(kind)) throw new Error(`${kind} write lost`);
  }

  now = () => this.clock;
  startReader = (_: TestShard, from: ReadPosition) => void this.done.push(`startReader ${from.kind}`);
  pauseReader = () => void this.done.push('pauseReader');
  resumeReader = () => void this.done.push('resumeReader');
  stopReader = async () => void this.done.push('stopReader');
  dropBuffer = () => void this.done.push('dropBuffer');
  learnChildren = (_shard: TestShard, children: readonly ShardNode[]) =>
    void this.done.push(`learnChildren ${children.map((c) => c.shardId).join(',')}`);
  writeCheckpoint = () => this.write('checkpoint', 'writeCheckpoint');
  writeShardEnd = async () => {
    await this.write('shardEnd', 'writeShardEnd');
    if (this.holdShardEnd) await new Promise<void>((resolve) => (this.heldShardEnd = resolve));
    const refused = this.refuseShardEnd;
    this.refuseShardEnd = false;
    return !refused;
  };
  markEnded = () => this.write('ended', 'markEnded');
  deleteLease = () => this.write('lease', 'deleteLease');
  letGo = (_: TestShard, how: LetGo) => void this.done.push(`letGo ${how.how}`);
  changed = () => void this.done.push('changed');
  writeFailed = (what: string) => void this.warnings.push(what);
  log = (level: LogLevel, message: string) => void (level === LogLevel.Warn && this.warnings.push(message));
}

const tick = (now: number, held: { buffered?: number; inFlight?: number; announceEnd?: boolean } = {}): ShardEvent => ({
  kind: 'tick',
  now,
  buffered: held.buffered ?? 0,
  inFlight: held.inFlight ?? 0,
  announceEnd: held.announceEnd ?? false,
});

async function readingShard(world: FakeWorld): Promise<TestShard> {
  const shard = new TestShard();
  await execute(world, shard, { kind: 'started', from: { kind: 'AFTER', sequenceNumber: '5' } });
  return shard;
}

describe('shard executor', () => {
  it('reads from the checkpoint, drains at the end, and finishes once every record is acked', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    expect(shard.phase).toEqual({ kind: 'reading', paused: false });
    await execute(world, shard, { kind: 'endReached', now: 10, children: [] });
    await execute(world, shard, tick(20, { inFlight: 2 }));
    expect(shard.phase.kind).toBe('draining');
    await execute(world, shard, tick(30));
    expect(world.done).toEqual([
      'startReader AFTER',
      'stopReader',
      'learnChildren ',
      'writeShardEnd',
      'letGo finished',
      'changed',
    ]);
    expect(shard.phase.kind).toBe('gone');
  });

  it('a SHARD_END the store refuses (the checkpoint moved under us) gives the lease back instead', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    world.setShouldRefuseNextShardEnd();
    await execute(world, shard, { kind: 'endReached', now: 0, children: [] });
    await execute(world, shard, tick(1));
    expect(world.done.slice(-4)).toEqual(['writeShardEnd', 'deleteLease', 'letGo released', 'changed']);
    expect(world.warnings.join()).toContain('SHARD_END not written');
  });

  it('a lost SHARD_END write goes back to draining and is tried again after its wait', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    world.setShouldFailNext('shardEnd');
    await execute(world, shard, { kind: 'endReached', now: 0, children: [] });
    world.clock = 100;
    await execute(world, shard, tick(100));
    expect(shard.phase).toMatchObject({ kind: 'draining', retryAt: 600 });
    await execute(world, shard, tick(300));
    expect(world.done.filter((d) => d === 'writeShardEnd')).toHaveLength(1);
    await execute(world, shard, tick(600));
    expect(world.done.slice(-3)).toEqual(['writeShardEnd', 'letGo finished', 'changed']);
  });

  it('hands over: stops reading at once, waits for acks up to the deadline, checkpoints, then deletes the lease', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    await execute(world, shard, { kind: 'release', deadline: 1_000, reason: 'rebalance' });
    expect(world.done.slice(-2)).toEqual(['stopReader', 'dropBuffer']);
    await execute(world, shard, tick(500, { inFlight: 1 }));
    expect(shard.phase.kind).toBe('releasing');
    await execute(world, shard, tick(1_000, { inFlight: 1 }));
    expect(world.done.slice(-4)).toEqual(['writeCheckpoint', 'deleteLease', 'letGo released', 'changed']);
  });

  it('a failed last checkpoint keeps the lease (failed records may still be re-emitted) and is retried', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    await execute(world, shard, { kind: 'release', deadline: 0, reason: 'rebalance' });
    world.setShouldFailNext('checkpoint');
    world.clock = 10;
    await execute(world, shard, tick(10));
    expect(shard.phase).toMatchObject({ kind: 'releasing', retryAt: 510 });
    expect(world.done).not.toContain('deleteLease');
    await execute(world, shard, tick(510));
    expect(world.done.slice(-4)).toEqual(['writeCheckpoint', 'deleteLease', 'letGo released', 'changed']);
  });

  it('a lease delete whose reply was lost: nothing is emitted while it is retried, and it is retried', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    await execute(world, shard, { kind: 'release', deadline: 0, reason: 'rebalance' });
    world.setShouldFailNext('lease');
    world.clock = 5;
    await execute(world, shard, tick(5));
    expect(shard.phase).toEqual({ kind: 'givingBack', retryAt: 505 });
    await execute(world, shard, { kind: 'flush' });
    expect(world.done.filter((d) => d === 'writeCheckpoint')).toHaveLength(1);
    await execute(world, shard, tick(100));
    expect(world.done.filter((d) => d === 'deleteLease')).toHaveLength(1);
    await execute(world, shard, tick(505));
    expect(world.done.slice(-3)).toEqual(['deleteLease', 'letGo released', 'changed']);
  });

  it('a SHARD_END checkpoint at start gives the lease straight back; a failed start lets go and deletes it', async () => {
    const world = new FakeWorld();
    await execute(world, new TestShard(), { kind: 'started', from: { kind: 'SHARD_END' } });
    expect(world.done).toEqual(['deleteLease', 'letGo released', 'changed']);
    const failed = new FakeWorld();
    await execute(failed, new TestShard(), { kind: 'startFailed' });
    expect(failed.done).toEqual(['letGo forgotten', 'deleteLease']);
  });

  it('forgotten while its SHARD_END write is on its way: the outcome changes nothing, the shard is let go once', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    await execute(world, shard, { kind: 'endReached', now: 0, children: [] });
    world.setShouldHoldShardEnd();
    const finishing = execute(world, shard, tick(1));
    await execute(world, shard, { kind: 'forget' });
    world.releaseHeldShardEnd();
    await finishing;
    expect(world.done.filter((d) => d.startsWith('letGo'))).toEqual(['letGo forgotten']);
  });

  it('pauses and resumes its reader with the topology, once per change', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    for (const active of [false, false, true, true]) await execute(world, shard, { kind: 'active', active });
    expect(world.done.slice(1)).toEqual(['pauseReader', 'resumeReader']);
  });

  it('at shutdown: the last checkpoint, then the lease, with nothing waited on as an event', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    world.setShouldFailNext('lease');
    await execute(world, shard, { kind: 'shutdown' });
    expect(world.done.slice(1)).toEqual(['stopReader', 'writeCheckpoint', 'deleteLease']);
    expect(shard.phase.kind).toBe('gone');
    expect(world.warnings).toEqual([]);
  });

  it('announces the end once nothing is buffered (ordering "parents-emitted"), again after a failed try', async () => {
    const world = new FakeWorld();
    const shard = await readingShard(world);
    await execute(world, shard, { kind: 'endReached', now: 0, children: [] });
    world.setShouldFailNext('ended');
    const announce = (now: number, buffered: number) => tick(now, { buffered, inFlight: 1, announceEnd: true });
    await execute(world, shard, announce(1, 3));
    expect(world.done).not.toContain('markEnded');
    await execute(world, shard, announce(2, 0));
    expect(shard.phase).toMatchObject({ kind: 'draining', announced: false });
    await execute(world, shard, announce(3, 0));
    expect(world.done.filter((d) => d === 'markEnded')).toHaveLength(2);
  });
});
