/** A shard as the listing shows it: the node of the shard graph every layer reasons about. */
export interface ShardNode {
  shardId: string;
  parents: string[];
  /** True when the shard has an ending sequence number (no new records will arrive). */
  closed: boolean;
  /** Hash keys routed to the shard, inclusive, as decimal strings (when the listing gave them). */
  hashKeyRange?: { start: string; end: string };
}
