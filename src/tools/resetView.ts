/** Pure: a reset plan as the operator reads it before answering `yes`. */
import { describePosition, type Position } from '../core/position';
import type { ResetTarget } from './args';
import type { ResetChange, ResetPlan } from './resetPlan';

export function describeTarget(target: ResetTarget): string {
  switch (target.kind) {
    case 'AFTER':
      return `after sequence number ${target.sequenceNumber}`;
    case 'AT_TIMESTAMP':
      return `${new Date(target.timestampMs).toISOString()}`;
    default:
      return target.kind;
  }
}

function positionText(position: Position | undefined, startsAt: Position | undefined): string {
  if (position) return position.kind === 'SHARD_END' ? 'SHARD_END (finished)' : describePosition(position);
  return `no checkpoint (would start ${startsAt ? describePosition(startsAt) : '?'})`;
}

function changeLine(change: ResetChange): string {
  const markers = [
    change.removeFinished ? 'finished marker removed' : '',
    change.removeEnded ? 'ended marker removed' : '',
  ]
    .filter(Boolean)
    .join(', ');
  const held = change.heldBy ? `; LEASED by ${change.heldBy}` : '';
  return `  ${change.shardId}: ${positionText(change.from, change.startsAt)} -> ${describePosition(change.to)}${markers ? ` (${markers})` : ''} [${change.reason}]${held}`;
}

export function renderPlan(plan: ResetPlan, where: string): string {
  const lines = [`reset of ${where} to ${describeTarget(plan.target)}:`];
  if (plan.changes.length === 0) lines.push('  nothing to change');
  else lines.push(...plan.changes.map(changeLine));
  if (plan.unchanged.length > 0)
    lines.push('left as they are:', ...plan.unchanged.map((u) => `  ${u.shardId}: ${u.why}`));
  if (plan.leases.length > 0)
    lines.push(
      `leases held now (a spout is running): ${plan.leases.map((l) => `${l.shardId} by ${l.owner}`).join(', ')}`,
    );
  return lines.join('\n');
}

/** What --force means for the shards still leased: said before anything is written. */
export function forceWarning(plan: ResetPlan): string | undefined {
  const held = plan.changes.filter((c) => c.heldBy !== undefined);
  if (held.length === 0) return undefined;
  return (
    `WARNING (--force): ${held.map((c) => c.shardId).join(', ')} ${held.length === 1 ? 'is' : 'are'} leased. A live holder keeps reading from where it is, ` +
    'and its next checkpoint (at its next ack, or when it stops) replaces the reset one if that is later. --force is for leases ' +
    'left by processes that are gone (ZooKeeper drops them when their sessions time out) or that are deactivated with every tuple acked.'
  );
}
