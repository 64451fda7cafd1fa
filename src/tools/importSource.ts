/**
 * What the two old Storm Kinesis spouts left in ZooKeeper, read as their code wrote it (docs/migration.md):
 *
 * awslabs kinesis-storm-spout 1.x: `/<zookeeperPrefix>/<topologyName>/<streamName>/<shardId>/state` holds
 *   Jackson's JSON of its ShardStateV0, `{"checkpoint":"<sequence number>"}`, written once the records up to
 *   it were acked (or given up after their retries); on restart it seeks AFTER_SEQUENCE_NUMBER that number.
 *   A sibling `shardList` node (`{"shardList":[...]}`) exists while the topology is active: its deactivate
 *   deletes it. No ephemeral node, no mark of a finished shard.
 * Apache Storm's storm-kinesis (1.1 to 2.5): `/<zkNode>/<streamName>/<shardId>` holds json-simple's
 *   `{"committedSequenceNumber":"<sequence number>"}`, the highest acked record with nothing unacked below it;
 *   on restart it seeks AFTER_SEQUENCE_NUMBER that number. No topology name in the path, no ephemeral node,
 *   no mark of a finished shard.
 * Both therefore mean "resume after this record": this spout's `AFTER <sequence number>` checkpoint.
 */
import type { ZooKeeper } from '../coordination/zooKeeper';
import { describeError } from '../errors';

export const SOURCES = ['awslabs-storm-spout', 'storm-kinesis'] as const;
export type SourceKind = (typeof SOURCES)[number];

/** The awslabs spout's default `zookeeperPrefix` (KinesisSpoutConfig). */
export const AWSLABS_DEFAULT_PREFIX = 'kinesis_storm_spout';

export interface SourceLocation {
  from: SourceKind;
  /** awslabs: the zookeeperPrefix; storm-kinesis: ZkInfo's zkNode. */
  root: string;
  /** awslabs only: the topology's name (its `topology.name`). */
  topology?: string;
  stream: string;
}

export interface SourceState {
  /** The ZooKeeper path the shards' nodes are under. */
  path: string;
  /** Resume after this sequence number, by shard. */
  positions: ReadonlyMap<string, string>;
  /** Shards the source knows of with no stored position (e.g. a state node never written). */
  withoutPosition: ReadonlySet<string>;
  /** Nodes that cannot be read as the source writes them, and why. */
  unreadable: ReadonlyMap<string, string>;
  /** What the operator should know (e.g. the awslabs spout's shardList still there). */
  notes: string[];
}

/** The folder holding one node per shard, as each source builds its paths. */
export function sourcePath(location: SourceLocation): string {
  if (location.from === 'awslabs-storm-spout')
    // ZookeeperShardState.buildZookeeperPath: "/" + prefix + "/" + topology + "/" + stream + "/" + suffix.
    return `/${location.root}/${location.topology}/${location.stream}`;
  // storm-kinesis ZkConnection.getZkPath: a leading "/" added when missing, a "/" between zkNode and stream.
  const node = location.root.startsWith('/') ? location.root : `/${location.root}`;
  return `${node}${node.endsWith('/') ? '' : '/'}${location.stream}`;
}

const FIELD: Record<SourceKind, string> = {
  'awslabs-storm-spout': 'checkpoint',
  'storm-kinesis': 'committedSequenceNumber',
};

/**
 * Pure: the sequence number a source node holds; undefined for the awslabs spout's empty checkpoint (its
 * "no position"); throws with what is wrong otherwise.
 */
export function parseSourceNode(from: SourceKind, data: Buffer): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    throw new Error(`not JSON: ${JSON.stringify(data.toString('utf8').slice(0, 80))}`);
  }
  const field = FIELD[from];
  const seq = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[field] : undefined;
  if (seq === '' && from === 'awslabs-storm-spout') return undefined;
  if (typeof seq !== 'string' || !/^\d+$/.test(seq))
    throw new Error(`expected {"${field}":"<sequence number>"}, found ${JSON.stringify(value)}`);
  return seq.replace(/^0+(?=\d)/, '');
}

/** Reads the source's state; undefined when its folder does not exist. */
export async function readSourceState(zk: ZooKeeper, location: SourceLocation): Promise<SourceState | undefined> {
  const path = sourcePath(location);
  if (!(await zk.getData(path))) return undefined;
  const children = await zk.getChildren(path);
  const positions = new Map<string, string>();
  const withoutPosition = new Set<string>();
  const unreadable = new Map<string, string>();
  const notes: string[] = [];
  const awslabs = location.from === 'awslabs-storm-spout';
  for (const child of children.sort()) {
    if (awslabs && child === 'shardList') {
      notes.push(
        `${path}/shardList exists: the awslabs spout deletes it when its topology is deactivated (storm kill does), so that topology may still be running; check with "storm list"`,
      );
      continue;
    }
    const nodePath = awslabs ? `${path}/${child}/state` : `${path}/${child}`;
    const node = await zk.getData(nodePath);
    if (!node) {
      withoutPosition.add(child);
      continue;
    }
    try {
      const seq = parseSourceNode(location.from, node.data);
      if (seq === undefined) withoutPosition.add(child);
      else positions.set(child, seq);
    } catch (err) {
      unreadable.set(child, `${nodePath}: ${err instanceof Error ? err.message : describeError(err)}`);
    }
  }
  return { path, positions, withoutPosition, unreadable, notes };
}
