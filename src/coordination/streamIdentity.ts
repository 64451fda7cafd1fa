/**
 * Whether the stream is the one the checkpoints belong to: a stream deleted and re-created under the same
 * name has another ARN or creation time, and reading it as if it were the old one would look like every
 * shard expired. The spout refuses it; the tools show it and refuse to reset it.
 */
import type { Bootstrap } from '../core/position';
import { ErrorCode, SpoutError } from '../errors';

/** The refusal of a stream that is not the one the checkpoints under `base` belong to, or undefined. */
export function identityMismatch(
  bootstrap: Pick<Bootstrap, 'streamArn' | 'streamCreatedMs'>,
  identity: { streamArn: string; createdMs: number },
  base: string,
): SpoutError | undefined {
  if (bootstrap.streamArn === identity.streamArn && bootstrap.streamCreatedMs === identity.createdMs) return undefined;
  return new SpoutError(
    ErrorCode.StreamMismatch,
    `refusing to read ${identity.streamArn} (created ${new Date(identity.createdMs).toISOString()}): the checkpoints under ${base} belong to a stream created ${new Date(bootstrap.streamCreatedMs).toISOString()} (${bootstrap.streamArn}). ` +
      'The stream was deleted and re-created: remove that ZooKeeper path to start over, or use another applicationName.',
  );
}
