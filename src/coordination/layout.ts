/**
 * Where the state lives in ZooKeeper, under `<root>/<applicationName>/<streamName>/`:
 *   bootstrap              persistent  first start time, initial position, stream identity, shards at start
 *   checkpoints/<shardId>  persistent  where the shard resumes: {position}; SHARD_END once read and acked;
 *                                      v 2 when the position stops inside a KPL aggregate (a subSequence)
 *   finished/<shardId>     persistent  marker created with SHARD_END, watched so every task learns at once
 *   ended/<shardId>        persistent  every record emitted (only with ordering "parents-emitted"), watched
 *   leases/<shardId>       ephemeral   who reads the shard now: {owner}
 *   members/<memberId>     ephemeral   the live spout tasks, named task<index>-<host>-<pid>-<session> (memberIdOf)
 *   holders                persistent  lease counts by member, written by the first member (balance "count")
 * Every stored value is JSON with a version field `v` (storedValues.ts).
 */

/** The folders below the base, one node per shard (or member) in each. */
export const KINDS = ['checkpoints', 'finished', 'ended', 'leases', 'members'] as const;

export type Kind = (typeof KINDS)[number];

export function basePath(root: string, applicationName: string, streamName: string): string {
  return `${root.replace(/\/+$/, '')}/${applicationName}/${streamName}`;
}

/** The node of one shard (or member) in one kind's folder. */
export function nodePath(base: string, kind: Kind, id: string): string {
  return `${base}/${kind}/${id}`;
}

/** A member's name: its task index first, so that the name alone says which declared task it is. */
export function memberIdOf(taskIndex: number, host: string, pid: number, sessionId: string): string {
  return `task${taskIndex}-${host}-${pid}-${sessionId}`;
}

/** The task index a memberId name carries; undefined for a name of another form. */
export function taskIndexOf(member: string): number | undefined {
  const index = /^task(\d+)-/.exec(member)?.[1];
  return index === undefined ? undefined : Number(index);
}
