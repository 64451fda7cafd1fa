/**
 * The cached shard listing and when it must be taken again. Its state is explicit: `needsListing` (never
 * listed, a shard ended, a reader found no shard, deactivated, the periodic full look) or `listed`, with the
 * evidence of staleness the coordination state showed that this listing could not explain.
 *
 * Evidence (other tasks know shards this listing does not) lists at once the first time it is seen; when a
 * fresh listing does not explain it (a shard expired past retention and still drained by its holder, a lease
 * node left by hand), looking again for the same evidence backs off from STALE_RECHECK_FIRST_MS up to
 * `shardSyncIntervalMs`, so that it does not cost every task a full ListShards every assignment round.
 *
 * A shard read to its end here names its children (`ChildShards`): they join the cached listing at once, so
 * the next round takes them without a ListShards (their parents still first: a merge child waits for both).
 * Until a listing shows them they are "learned": a fresh listing that lacks one keeps it only while it shows
 * every parent and one of them still open (the listing predates the reshard), and the periodic look past the
 * highest listed id confirms them with the filtered listing it takes anyway. No children named (emulators),
 * or a child not naming the shard as its parent or naming one this listing does not know: the next round
 * lists, as before.
 */
import type { HashRange } from '../kinesis/aggregation';
import type { ShardNode } from '../core/shard';
import { FULL_LISTING_EVERY } from '../core/timings';

/** First wait before listing again for evidence that the last fresh listing did not explain. */
export const STALE_RECHECK_FIRST_MS = 1_000;

/** The stream's shard graph as the coordinator needs it: unfiltered, or past the highest known id. */
export interface ShardLister {
  /** Every shard the stream retains (an unfiltered ListShards). */
  all(): Promise<ShardNode[]>;
  /** Shards created after `lastShardId` (a filtered, cheap ListShards). */
  after(lastShardId: string): Promise<ShardNode[]>;
}

type ListingState =
  | { kind: 'needsListing'; checkIdentity: boolean }
  | {
      kind: 'listed';
      at: number;
      /** Evidence of staleness this listing was compared with and could not explain; undefined: not compared yet. */
      unexplained: ReadonlySet<string> | undefined;
    };

export class ShardListing {
  private state: ListingState = { kind: 'needsListing', checkIdentity: false };
  /** The last listing taken, kept while a new one is due (hash ranges, the periodic look's start). */
  private last: readonly ShardNode[] = [];
  private looks = 0;
  /** The wait before listing again for the unexplained evidence; kept across listings taken for other causes. */
  private recheckMs = STALE_RECHECK_FIRST_MS;
  private lastUnexplained: ReadonlySet<string> = new Set();
  /** Children learned from ChildShards that no listing has shown yet. */
  private learned = new Map<string, ShardNode>();

  constructor(
    private readonly lister: ShardLister,
    private readonly clock: () => number,
    /** Longest wait before listing again for evidence a listing could not explain. */
    private readonly recheckMaxMs: number,
  ) {}

  /** The last listing taken (possibly due for replacement). */
  get shards(): readonly ShardNode[] {
    return this.last;
  }

  get needsListing(): boolean {
    return this.state.kind === 'needsListing';
  }

  /** The stream's identity is to be checked against the bootstrap record with the next listing. */
  get identityCheckDue(): boolean {
    return this.state.kind === 'needsListing' && this.state.checkIdentity;
  }

  /** The next round lists again (and, with `checkIdentity`, checks that the stream is still the same one). */
  relist(checkIdentity = false): void {
    const before = this.state.kind === 'needsListing' && this.state.checkIdentity;
    this.state = { kind: 'needsListing', checkIdentity: before || checkIdentity };
  }

  identityChecked(): void {
    if (this.state.kind === 'needsListing') this.state = { ...this.state, checkIdentity: false };
  }

  /** A listing taken elsewhere (at join), not yet compared with the coordination state. */
  accept(shards: readonly ShardNode[]): void {
    this.last = this.withLearned(shards);
    this.state = { kind: 'listed', at: this.clock(), unexplained: undefined };
  }

  /** The cached listing when it may serve this round, given what the coordination state shows; else undefined. */
  cached(finished: ReadonlySet<string>, leases: ReadonlyMap<string, string>): readonly ShardNode[] | undefined {
    const state = this.state;
    if (state.kind === 'needsListing') return undefined;
    const evidence = unexplainedShards(this.last, finished, leases);
    if (evidence.size === 0) return this.last;
    const known = state.unexplained;
    if (!known || [...evidence].some((id) => !known.has(id))) return undefined;
    return this.clock() - state.at >= this.recheckMs ? undefined : this.last;
  }

  /** An unfiltered listing (not yet accepted: see `update`). */
  list(): Promise<ShardNode[]> {
    return this.lister.all();
  }

  /** Makes `shards` the cached listing, compared with the coordination state it was taken for. */
  update(shards: readonly ShardNode[], finished: ReadonlySet<string>, leases: ReadonlyMap<string, string>): void {
    const evidence = unexplainedShards(shards, finished, leases);
    const seen = this.lastUnexplained;
    const same = evidence.size > 0 && [...evidence].every((id) => seen.has(id));
    this.recheckMs = same ? Math.min(this.recheckMaxMs, this.recheckMs * 2) : STALE_RECHECK_FIRST_MS;
    this.lastUnexplained = evidence;
    this.last = this.withLearned(shards);
    this.state = { kind: 'listed', at: this.clock(), unexplained: evidence };
  }

  /**
   * A shard read to its end, and the children Kinesis named for it: added to the cached listing (the parent
   * marked closed) when each names it among its parents and every parent it names is listed; otherwise, or
   * with none named, the next round lists.
   */
  learnChildren(parentId: string, children: readonly ShardNode[]): void {
    const known = new Map(this.last.map((s) => [s.shardId, s]));
    const fresh = children.filter((c) => !known.has(c.shardId));
    const trusted = (c: ShardNode) => c.parents.includes(parentId) && c.parents.every((p) => known.has(p));
    if (children.length === 0 || !fresh.every(trusted)) {
      this.relist();
      return;
    }
    for (const child of fresh) this.learned.set(child.shardId, child);
    this.last = [...this.last.map((s) => (s.shardId === parentId && !s.closed ? { ...s, closed: true } : s)), ...fresh];
  }

  /** `shards` and the learned children it does not show but does not contradict (it predates the reshard). */
  private withLearned(shards: readonly ShardNode[]): readonly ShardNode[] {
    if (this.learned.size === 0) return shards;
    const byId = new Map(shards.map((s) => [s.shardId, s]));
    const kept: ShardNode[] = [];
    for (const [id, child] of this.learned) {
      const parents = child.parents.map((p) => byId.get(p));
      if (byId.has(id) || !parents.every((p) => p !== undefined) || parents.every((p) => p.closed))
        this.learned.delete(id);
      else kept.push(child);
    }
    return kept.length === 0 ? shards : [...shards, ...kept];
  }

  /**
   * The periodic look for shards no reader saw appear: usually past the highest known shard id, every
   * FULL_LISTING_EVERY-th time (or with nothing known) a full listing and an identity check at the next
   * round. True when the next round must list. Throws when the look fails.
   */
  async lookForNewShards(): Promise<boolean> {
    this.looks += 1;
    if (this.state.kind === 'needsListing' || this.last.length === 0 || this.looks % FULL_LISTING_EVERY === 0) {
      this.relist(true);
      return true;
    }
    // Past the highest *listed* id: the filtered listing then shows the learned children too, and confirms them.
    const highest = this.last
      .filter((s) => !this.learned.has(s.shardId))
      .map((s) => s.shardId)
      .sort()
      .pop()!;
    const after = await this.lister.after(highest);
    const shown = new Set(after.map((s) => s.shardId));
    const confirmed = [...this.learned.keys()].filter((id) => shown.has(id));
    for (const id of confirmed) this.learned.delete(id);
    if (after.length === confirmed.length && this.learned.size === 0) return false;
    this.relist();
    return true;
  }

  /** The shard's hash key range from the last listing, if it gave one. */
  hashRangeOf(shardId: string): HashRange | undefined {
    const range = this.last.find((s) => s.shardId === shardId)?.hashKeyRange;
    return range && /^\d+$/.test(range.start) && /^\d+$/.test(range.end)
      ? { start: BigInt(range.start), end: BigInt(range.end) }
      : undefined;
  }
}

/**
 * Shards the coordination state knows that `shards` does not explain: a finished shard without a listed
 * child (the listing predates the reshard), or a lease on an unlisted shard. Tasks with different views
 * would compute different shares and could leave a shard unread.
 */
export function unexplainedShards(
  shards: readonly ShardNode[],
  finished: ReadonlySet<string>,
  leases: ReadonlyMap<string, string>,
): Set<string> {
  const listed = new Set(shards.map((s) => s.shardId));
  const parents = new Set(shards.flatMap((s) => s.parents));
  const evidence = new Set<string>();
  for (const id of finished) if (listed.has(id) && !parents.has(id)) evidence.add(id);
  for (const id of leases.keys()) if (!listed.has(id)) evidence.add(id);
  return evidence;
}
