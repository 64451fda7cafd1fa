/**
 * A careless operator: writes unexpected data into ZooKeeper while the spout runs (a lease node without
 * its version field, a checkpoint that is not JSON), and puts things right when the faults stop. The spout
 * must say so through Storm (`error`, naming the shard) and keep the damage to that one shard.
 */
import type { Random } from './random';
import type { SimStream } from './kinesis/simStream';
import type { ZkServer } from './zooKeeper/zkServer';

export interface Damage {
  kind: 'lease without version' | 'checkpoint not JSON';
  path: string;
  shardId: string;
  at: number;
  /** What the operator wrote. */
  written: string;
  /** When which session read the damaged data (it cannot report what it never saw; a follower may serve the older data). */
  reads: { at: number; sessionId: string }[];
  /** The checkpoint as it was, put back at repair. */
  previous?: Buffer;
}

export class Operator {
  readonly sessionId: string;
  readonly damage: Damage[] = [];

  constructor(
    private readonly server: ZkServer,
    private readonly base: string,
    private readonly log: (what: string) => void,
    private readonly clock: () => number,
  ) {
    this.sessionId = server.openSession(Number.MAX_SAFE_INTEGER, {
      watchFired: () => undefined,
      expired: () => undefined,
    });
    server.readers.push((path, sessionId, data) => {
      if (sessionId === this.sessionId) return;
      for (const damage of this.damage)
        if (damage.path === path && data.toString('utf8') === damage.written)
          damage.reads.push({ at: this.clock(), sessionId });
    });
  }

  /** Damages one unfinished shard's node (a finished shard's nodes are never read again); false when none suits. */
  corrupt(stream: SimStream, rng: Random, now: number): boolean {
    const unfinished = [...stream.shards.values()].filter(
      (s) =>
        !this.server.node(`${this.base}/finished/${s.shardId}`) &&
        !this.server.node(`${this.base}/checkpoints/${s.shardId}`)?.data.toString('utf8').includes('SHARD_END'),
    );
    if (unfinished.length === 0) return false;
    const shard = rng.pick(unfinished);
    if (this.damage.some((d) => d.shardId === shard.shardId)) return false;
    if (rng.chance(0.5)) {
      const path = `${this.base}/leases/${shard.shardId}`;
      if (this.server.node(path)) return false;
      const written = '{"owner":"someone-by-hand"}';
      const reply = this.server.apply(this.sessionId, {
        op: 'create',
        path,
        data: Buffer.from(written),
        ephemeral: false,
      });
      if (!reply.ok) return false;
      this.damage.push({ kind: 'lease without version', path, shardId: shard.shardId, at: now, written, reads: [] });
    } else {
      const path = `${this.base}/checkpoints/${shard.shardId}`;
      const node = this.server.node(path);
      if (!node) return false;
      const written = 'not json {';
      this.server.apply(this.sessionId, { op: 'setData', path, data: Buffer.from(written), version: -1 });
      this.damage.push({
        kind: 'checkpoint not JSON',
        path,
        shardId: shard.shardId,
        at: now,
        written,
        previous: node.data,
        reads: [],
      });
    }
    this.log(`CORRUPTED ${this.damage[this.damage.length - 1].path} (${this.damage[this.damage.length - 1].kind})`);
    return true;
  }

  /** Puts every damaged node right (a checkpoint someone rewrote since is left alone). */
  repair(): void {
    for (const damage of this.damage) {
      const node = this.server.node(damage.path);
      if (damage.kind === 'lease without version') {
        if (node?.ephemeralOwner === '0')
          this.server.apply(this.sessionId, { op: 'remove', path: damage.path, version: -1 });
      } else if (node && node.data.toString('utf8') === 'not json {' && damage.previous) {
        this.server.apply(this.sessionId, { op: 'setData', path: damage.path, data: damage.previous, version: -1 });
      }
      this.log(`repaired ${damage.path}`);
    }
  }
}
