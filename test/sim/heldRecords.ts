/**
 * What one process must be holding, seen from Storm's side: per shard, every record it emitted from the
 * oldest one not acked yet onwards (the unacked must be kept for re-emission; the acked behind them cannot
 * be checkpointed yet). A lower bound on its memory that does not trust the process's own count.
 */
interface ShardLedger {
  /** Message ids in the order first emitted (stream order), with their place in the shard and ack state. */
  entries: { id: string; rank: bigint; acked: boolean }[];
  index: Map<string, number>;
  /** First entry not acked. */
  head: number;
}

export class HeldRecords {
  private readonly shards = new Map<string, ShardLedger>();

  /** `rank`: where the record (or user record) sits in its shard. */
  emitted(shardId: string, id: string, rank: bigint): void {
    let ledger = this.shards.get(shardId);
    const at = ledger?.index.get(id);
    if (ledger && at !== undefined && !ledger.entries[at].acked) return; // a retry of a record in flight
    const last = ledger?.entries[ledger.entries.length - 1];
    if (!ledger || (last && rank <= last.rank)) {
      // Reading again from a checkpoint (the shard was taken again): what came before is gone from memory.
      ledger = { entries: [], index: new Map(), head: 0 };
      this.shards.set(shardId, ledger);
    }
    ledger.index.set(id, ledger.entries.length);
    ledger.entries.push({ id, rank, acked: false });
  }

  acked(shardId: string, id: string): void {
    const ledger = this.shards.get(shardId);
    const at = ledger?.index.get(id);
    if (!ledger || at === undefined) return;
    ledger.entries[at].acked = true;
    while (ledger.head < ledger.entries.length && ledger.entries[ledger.head].acked) ledger.head += 1;
    if (ledger.head === ledger.entries.length) {
      ledger.entries = [];
      ledger.index.clear();
      ledger.head = 0;
    }
  }

  /** The lease changed hands (taken or given up): a new holding starts from nothing. */
  forget(shardId: string): void {
    this.shards.delete(shardId);
  }

  /** Where the oldest record not acked yet and the last one emitted sit; undefined when every one is acked. */
  unackedSpan(shardId: string): { from: bigint; to: bigint } | undefined {
    const ledger = this.shards.get(shardId);
    if (!ledger || ledger.head >= ledger.entries.length) return undefined;
    return { from: ledger.entries[ledger.head].rank, to: ledger.entries[ledger.entries.length - 1].rank };
  }

  /** Records held for the shards `stillHeld` says this process holds. */
  count(stillHeld: (shardId: string) => boolean): number {
    let total = 0;
    for (const [shardId, ledger] of this.shards) if (stillHeld(shardId)) total += ledger.entries.length - ledger.head;
    return total;
  }
}
