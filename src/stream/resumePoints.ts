/**
 * Where each shard resumes, said at every start: from its checkpoint, or (without one) from the start the
 * bootstrap record decides, and that `initialPosition` applied only to the application's first start.
 * The gathering reads ZooKeeper once per shard; the wording is pure.
 */
import type { InitialPosition } from '../config/config';
import type { Checkpoint } from '../coordination/store';
import { describePosition, type Bootstrap, type Position } from '../core/position';
import type { ShardNode } from '../core/shard';
import { ErrorCode, SpoutError } from '../errors';
import type { Session } from '../coordination/session';

/** Shards named one by one in the log line; the rest are counted. */
const MAX_LISTED = 100;

export type ResumePoint =
  | { shardId: string; kind: 'checkpoint'; position: Position }
  | { shardId: string; kind: 'start'; position: Position };

function describeInitial(initial: InitialPosition): string {
  return typeof initial === 'string' ? initial : `{"atTimestamp": "${initial.atTimestamp}"}`;
}

function sameInitial(a: InitialPosition, b: InitialPosition): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The line on `initialPosition`: what the bootstrap record fixed, and whether the configuration now differs. */
export function initialPositionNote(bootstrap: Bootstrap, configured: InitialPosition, base: string): string {
  const differs = sameInitial(bootstrap.initialPosition, configured)
    ? ''
    : ` The configuration now says ${describeInitial(configured)}: that has no effect on this application (use \`kinesis-spout reset\` to move checkpoints, or another applicationName to start over).`;
  return (
    `initialPosition applies only to the application's first start: it started ${new Date(bootstrap.firstStartMs).toISOString()} with ${describeInitial(bootstrap.initialPosition)} ` +
    `(recorded in ${base}/bootstrap). A shard with a checkpoint resumes from it; one without, open at that first start, begins at that position; shards born since begin at TRIM_HORIZON.${differs}`
  );
}

/** One line: every shard's resume point (the first MAX_LISTED of them), and how many are finished. */
export function resumePointsLine(points: readonly ResumePoint[], finished: number): string {
  const listed = points
    .slice(0, MAX_LISTED)
    .map((p) =>
      p.kind === 'checkpoint'
        ? `${p.shardId} resumes from its checkpoint (${describePosition(p.position)})`
        : `${p.shardId} has no checkpoint: starts ${describePosition(p.position)}`,
    );
  const more = points.length > MAX_LISTED ? `; and ${points.length - MAX_LISTED} more` : '';
  return `where shards resume: ${listed.join('; ') || 'no shard left to read'}${more}${finished > 0 ? `; ${finished} shard(s) finished (SHARD_END)` : ''}`;
}

/**
 * Reads the checkpoints of the listed shards not finished yet. A node this version cannot read is
 * returned in `corrupt` (whoever reads one must report it), the others still gathered.
 */
export async function gatherResumePoints(
  session: Session,
  shards: readonly ShardNode[],
): Promise<{ points: ResumePoint[]; finished: number; corrupt: { shardId: string; error: SpoutError }[] }> {
  const finishedSet = await session.store.finishedShards();
  const points: ResumePoint[] = [];
  const corrupt: { shardId: string; error: SpoutError }[] = [];
  let finished = 0;
  // By code unit, not localeCompare: the same order for shard ids (ASCII, fixed-width numbers), and a
  // collator would load ICU's collation data into every spout process (about 3 MiB resident) for this alone.
  for (const shard of [...shards].sort((a, b) => (a.shardId < b.shardId ? -1 : a.shardId > b.shardId ? 1 : 0))) {
    if (finishedSet.has(shard.shardId)) {
      finished += 1;
      continue;
    }
    let checkpoint: Checkpoint | undefined;
    try {
      checkpoint = await session.store.readCheckpoint(shard.shardId);
    } catch (err) {
      if (!(err instanceof SpoutError && err.code === ErrorCode.CorruptState)) throw err;
      corrupt.push({ shardId: shard.shardId, error: err });
      continue;
    }
    if (checkpoint?.position.kind === 'SHARD_END') finished += 1;
    else if (checkpoint) points.push({ shardId: shard.shardId, kind: 'checkpoint', position: checkpoint.position });
    else {
      const start = session.startOf(shard.shardId);
      if (start.kind === 'SHARD_END') finished += 1;
      else points.push({ shardId: shard.shardId, kind: 'start', position: start });
    }
  }
  return { points, finished, corrupt };
}
