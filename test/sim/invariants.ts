/**
 * The guarantees of DESIGN.md "Invariants", checked against the truth (the fake servers' state and what
 * Storm saw), never against what the code under test believes:
 *   one-reader          an emit from shard S only while S's lease node belongs to a live session of the emitter
 *   parents-first       an emit from a child only once every parent's checkpoint is SHARD_END
 *   checkpoint-backwards  a checkpoint never moves back (SHARD_END is the top); never removed while the shard exists
 *   checkpoint-unacked  a checkpoint never covers a record nobody acked (that record would never be re-read)
 *   finished-unread     SHARD_END only on a closed shard whose records were all acked
 *   memory              records a process holds stay under maxRecordsInMemory plus one GetRecords
 *   converged           once faults stop, every record is acked and every shard checkpointed at its end
 *   churn               a process takes the same lease at most a few times a second (no tight loops)
 *   silent              unexpected data in ZooKeeper reaches Storm as an `error` naming the shard
 *   double-emission     a record is not emitted again under one lease while Storm still owes the outcome of its last emission
 *   covered             no record (user record of a KPL aggregate included) at or below its shard's stored checkpoint is
 *                       emitted: it was acked, and a new holder resumes after it (inside an aggregate: skips the done ones)
 *   duplicate           (planned-only runs: no crash, no ZooKeeper fault) no record emitted again once acked, unless
 *                       a hand-over's acks came after its deadline (handOvers.ts: what that lets the taker re-emit)
 *   start-handover      (planned deploys: tasks started at once) no lease handed over before the first reshard
 *   watch-leak          watch callbacks waiting on one path of one session stay few
 *   crash               no timer callback or Storm command throws
 * With `delivery: "at-most-once"` (SIM_DELIVERY), the checkpoint passes records before they are emitted, so
 * `covered`, `checkpoint-unacked`, the acks of `finished-unread` and those of `converged` do not apply; instead:
 *   twice               no record (user record) is emitted a second time, by any process, whatever the faults
 *   uncovered           a record is emitted only while its shard's stored checkpoint is at or past it
 */
import type { ZkServer, NodeChange } from './zooKeeper/zkServer';
import { SimStream } from './kinesis/simStream';

/** The bootstrap record as stored (DESIGN: the initial position, resolved once, for every later decision). */
interface StoredBootstrap {
  firstStartMs: number;
  initialPosition: unknown;
  shardsAtStart: string[];
  openAtStart: string[];
}

export interface Violation {
  invariant: string;
  detail: string;
  at: number;
}

/** One per assignment round would be fine for a while; this many means they pile up. */
const WATCH_LIMIT = 25;

/** Leases one session may take on one shard within a second. */
const CHURN_LIMIT = 10;

type Rank = bigint;
const TOP: Rank = 1n << 400n;

interface StoredPosition {
  kind: string;
  sequenceNumber?: string;
  subSequence?: number;
  timestampMs?: number;
}

/** Room for the sub-sequences of a KPL aggregate's user records between two sequence numbers. */
const SUB_SLOTS = 1n << 20n;

/** Where a record (a user record: `sub`) sits: by sequence number, then sub-sequence; a whole record after all its user records. */
export function unitRank(sequenceNumber: string, sub?: number): Rank {
  return BigInt(sequenceNumber) * SUB_SLOTS + (sub === undefined ? SUB_SLOTS - 1n : BigInt(sub));
}

function rankOf(position: StoredPosition): Rank {
  switch (position.kind) {
    case 'SHARD_END':
      return TOP;
    case 'AFTER':
      return unitRank(position.sequenceNumber ?? '0', position.subSequence);
    case 'AT_TIMESTAMP':
      return -1n;
    default:
      return -2n;
  }
}

function describe(position: StoredPosition | undefined): string {
  if (!position) return '(none)';
  if (position.kind !== 'AFTER') return position.kind;
  return position.subSequence === undefined
    ? `AFTER ${position.sequenceNumber}`
    : `AFTER ${position.sequenceNumber}:${position.subSequence}`;
}

function positionIn(data: Buffer | undefined): StoredPosition | undefined {
  if (!data) return undefined;
  try {
    return (JSON.parse(data.toString('utf8')) as { position?: StoredPosition }).position;
  } catch {
    return undefined;
  }
}

export class InvariantChecker {
  /** `<shardId>:<sequenceNumber>` of every record Storm acked at least once. */
  readonly acked = new Set<string>();
  readonly emitted = new Map<string, number>();
  violation: Violation | undefined;
  /**
   * Set in runs where every hand-over is planned: then a record acked once is never emitted again, unless
   * `isExcused` says a hand-over whose acks came after its deadline lets the taker re-emit it.
   */
  forbidDuplicates = false;
  isExcused: (shardId: string, rank: Rank) => boolean = () => false;
  /** The spouts run with `delivery: "at-most-once"`: see `twice` and `uncovered` above. */
  atMostOnce = false;
  /** Per shard, the last checkpoint the spouts wrote (what an operator wrote over it since is not theirs). */
  private readonly written = new Map<string, StoredPosition>();
  private readonly checkpointsPrefix: string;
  private readonly leasesPrefix: string;

  constructor(
    private readonly server: ZkServer,
    private readonly stream: SimStream,
    private readonly base: string,
    private readonly clock: () => number,
    private readonly trace: (what: string) => void,
  ) {
    this.checkpointsPrefix = `${base}/checkpoints/`;
    this.leasesPrefix = `${base}/leases/`;
    server.observers.push((change) => this.onNodeChange(change));
  }

  /** Invariants only traced, not failed on (to look past a known defect at the next one). */
  ignored: ReadonlySet<string> = new Set();
  private readonly seenIgnored = new Set<string>();

  fail(invariant: string, detail: string): void {
    if (this.ignored.has(invariant)) {
      if (!this.seenIgnored.has(invariant)) this.trace(`ignored violation ${invariant}: ${detail}`);
      this.seenIgnored.add(invariant);
      return;
    }
    this.trace(`VIOLATION ${invariant}: ${detail}`);
    this.violation ??= { invariant, detail, at: this.clock() };
  }

  private bootstrap: StoredBootstrap | undefined;

  /**
   * Whether a record is at or after the initial position, so that it must be read: with TRIM_HORIZON every
   * record; with LATEST, records of shards born after the first start, and records that arrived from the
   * first start on in shards open then (shards already closed then are never read).
   */
  private expected(shardId: string, arrivalMs: number): boolean {
    this.bootstrap ??= this.readBootstrap();
    const b = this.bootstrap;
    if (b?.initialPosition !== 'LATEST' || !b.shardsAtStart.includes(shardId)) return true;
    return b.openAtStart.includes(shardId) && arrivalMs >= b.firstStartMs;
  }

  private closedAtStart(shardId: string): boolean {
    this.bootstrap ??= this.readBootstrap();
    const b = this.bootstrap;
    return (
      b !== undefined &&
      b.initialPosition === 'LATEST' &&
      b.shardsAtStart.includes(shardId) &&
      !b.openAtStart.includes(shardId)
    );
  }

  private readBootstrap(): StoredBootstrap | undefined {
    const node = this.server.node(`${this.base}/bootstrap`);
    if (!node) return undefined;
    try {
      return JSON.parse(node.data.toString('utf8')) as StoredBootstrap;
    } catch {
      return undefined;
    }
  }

  private checkpointOf(shardId: string): StoredPosition | undefined {
    return positionIn(this.server.node(this.checkpointsPrefix + shardId)?.data);
  }

  /** An emit of one record by a process whose ZooKeeper sessions (ever opened) are `sessions`. */
  onEmit(who: string, sessions: ReadonlySet<string>, shardId: string, sequenceNumber: string, sub?: number): void {
    const shard = this.stream.shards.get(shardId);
    const record = shard?.records.find((r) => r.sequenceNumber === sequenceNumber);
    const key = sub === undefined ? `${shardId}:${sequenceNumber}` : `${shardId}:${sequenceNumber}:${sub}`;
    if (!shard || !record) return this.fail('phantom', `${who} emitted ${key}, which is not in the stream`);
    // An aggregate's user records have ids with their sub-sequence; a plain record has none.
    if (!SimStream.unitsOf(record).includes(key))
      return this.fail(
        'phantom',
        `${who} emitted ${key}, which is not an id of ${record.users === 0 ? 'the plain record' : `the aggregate of ${record.users}`} ${shardId}:${sequenceNumber}`,
      );
    if (!this.expected(shardId, record.arrivalMs))
      return this.fail('phantom', `${who} emitted ${key}, which is before the initial position`);
    const stored = this.checkpointOf(shardId);
    if (this.atMostOnce) {
      if (this.emitted.has(key)) return this.fail('twice', `${who} emitted ${key} a second time`);
      const written = this.written.get(shardId);
      if (written?.kind !== 'AFTER' || unitRank(sequenceNumber, sub) > rankOf(written))
        return this.fail(
          'uncovered',
          `${who} emitted ${key} while the checkpoint of ${shardId} (${describe(written)}) is not past it`,
        );
    } else if (stored?.kind === 'AFTER' && unitRank(sequenceNumber, sub) <= rankOf(stored))
      return this.fail(
        'covered',
        `${who} emitted ${key}, which the checkpoint of ${shardId} (${describe(stored)}) already covers`,
      );
    this.emitted.set(key, (this.emitted.get(key) ?? 0) + 1);
    if (this.forbidDuplicates && this.acked.has(key) && !this.isExcused(shardId, unitRank(sequenceNumber, sub)))
      return this.fail(
        'duplicate',
        `${who} emitted ${key} again after it was acked, though no process crashed, ZooKeeper never failed, and every hand-over of ${shardId} had its records acked before its deadline`,
      );
    const lease = this.server.node(this.leasesPrefix + shardId);
    if (!lease) return this.fail('one-reader', `${who} emitted ${key} while nobody holds the lease on ${shardId}`);
    if (!sessions.has(lease.ephemeralOwner)) {
      return this.fail(
        'one-reader',
        `${who} emitted ${key} while the lease on ${shardId} belongs to session ${lease.ephemeralOwner}, not one of ${who}'s (${[...sessions].join(', ')})`,
      );
    }
    if (!this.server.isAlive(lease.ephemeralOwner))
      return this.fail(
        'one-reader',
        `${who} emitted ${key} on the lease of its expired session ${lease.ephemeralOwner}`,
      );
    for (const parent of shard.parents) {
      if (!this.finished.has(parent) && !this.closedAtStart(parent))
        return this.fail(
          'parents-first',
          `${who} emitted ${key} while parent ${parent} is at ${describe(this.checkpointOf(parent))}`,
        );
    }
  }

  /** `id`: the message id acked. */
  onAck(id: string): void {
    this.acked.add(id);
  }

  /** Shards whose checkpoint the spout set to SHARD_END (an operator's damage later does not undo it). */
  private readonly finished = new Set<string>();
  /** Sessions whose writes are not the spout's (the operator's). */
  readonly outsiders = new Set<string>();
  private readonly takes = new Map<string, { since: number; count: number }>();

  private onNodeChange(change: NodeChange): void {
    if (change.by !== undefined && this.outsiders.has(change.by)) return;
    if (change.path.startsWith(this.leasesPrefix) && !change.before && change.after)
      this.countTake(change.by ?? '', change.path);
    if (!change.path.startsWith(this.checkpointsPrefix)) return;
    const shardId = change.path.slice(this.checkpointsPrefix.length);
    const shard = this.stream.shards.get(shardId);
    const before = positionIn(change.before?.data);
    const after = positionIn(change.after?.data);
    const by = change.by ?? 'the server';
    if (!shard)
      return this.fail('checkpoint-backwards', `checkpoint written for ${shardId}, which the stream never had`);
    if (!change.after)
      return this.fail(
        'checkpoint-backwards',
        `checkpoint of ${shardId} removed (was ${describe(before)}) by ${by} while the stream still has the shard`,
      );
    if (!after)
      return this.fail(
        'checkpoint-backwards',
        `checkpoint of ${shardId} written by ${by} holds no position: ${change.after.data.toString('utf8')}`,
      );
    this.trace(`checkpoint ${shardId}: ${describe(before)} -> ${describe(after)} (session ${by})`);
    this.written.set(shardId, after);
    if (after.kind === 'SHARD_END') this.finished.add(shardId);
    if (before && rankOf(after) < rankOf(before))
      return this.fail(
        'checkpoint-backwards',
        `checkpoint of ${shardId} moved back from ${describe(before)} to ${describe(after)} (session ${by})`,
      );
    const limit = rankOf(after);
    if (limit < 0n) return;
    if (after.kind === 'SHARD_END' && shard.endingSequenceNumber === undefined)
      return this.fail('finished-unread', `${shardId} marked SHARD_END by ${by} but it is still open`);
    if (this.atMostOnce) return;
    const unacked = shard.records
      .filter((r) => BigInt(r.sequenceNumber) * SUB_SLOTS <= limit && this.expected(shardId, r.arrivalMs))
      .flatMap((r) =>
        SimStream.unitsOf(r).filter(
          (id, sub) => unitRank(r.sequenceNumber, r.users === 0 ? undefined : sub) <= limit && !this.acked.has(id),
        ),
      );
    if (unacked.length > 0) {
      const invariant = after.kind === 'SHARD_END' ? 'finished-unread' : 'checkpoint-unacked';
      this.fail(
        invariant,
        `checkpoint of ${shardId} set to ${describe(after)} by ${by} while ${unacked.length} record(s) at or below it were never acked (first ${unacked[0]})`,
      );
    }
  }

  private countTake(session: string, path: string): void {
    const key = `${session} ${path}`;
    const now = this.clock();
    const window = this.takes.get(key);
    if (!window || now - window.since >= 1_000) {
      this.takes.set(key, { since: now, count: 1 });
      return;
    }
    window.count += 1;
    if (window.count > CHURN_LIMIT)
      this.fail('churn', `session ${session} took ${path} ${window.count} times within a second`);
  }

  checkWatchers(who: string, path: string, pending: number): void {
    if (pending > WATCH_LIMIT) this.fail('watch-leak', `${who} has ${pending} watch callbacks waiting on ${path}`);
  }

  checkMemory(who: string, inMemory: number, cap: number): void {
    if (inMemory > cap) this.fail('memory', `${who} holds ${inMemory} records, over the cap of ${cap}`);
  }

  /** Why the run has not converged yet; undefined once every record is acked and every shard checkpointed at its end. */
  notConverged(): string | undefined {
    let total = 0;
    let unacked = 0;
    const missing: string[] = [];
    for (const shard of this.stream.shards.values()) {
      for (const r of shard.records) {
        if (!this.expected(shard.shardId, r.arrivalMs)) continue;
        for (const key of SimStream.unitsOf(r)) {
          total += 1;
          if (this.acked.has(key)) continue;
          unacked += 1;
          if (missing.length < 3) missing.push(`${key}${this.emitted.has(key) ? ' (emitted)' : ' (never emitted)'}`);
        }
      }
    }
    if (unacked > 0 && !this.atMostOnce)
      return `${unacked} of ${total} record(s) never acked, e.g. ${missing.join(', ')}`;
    for (const shard of this.stream.shards.values()) {
      const position = this.checkpointOf(shard.shardId);
      const lease = this.server.node(this.leasesPrefix + shard.shardId);
      const holder = lease ? `lease held by session ${lease.ephemeralOwner}` : 'no lease';
      const expected = shard.records.filter((r) => this.expected(shard.shardId, r.arrivalMs));
      if (shard.endingSequenceNumber !== undefined) {
        if (position?.kind !== 'SHARD_END' && !this.closedAtStart(shard.shardId))
          return `closed ${shard.shardId} is at ${describe(position)}, not SHARD_END (${holder})`;
      } else if (expected.length > 0) {
        const last = expected[expected.length - 1].sequenceNumber;
        if (position?.kind !== 'AFTER' || position.sequenceNumber !== last)
          return `open ${shard.shardId} is at ${describe(position)}, not after its last record ${last} (${holder})`;
      }
    }
    return undefined;
  }
}
