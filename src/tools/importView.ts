/** Pure: an import plan as the operator reads it before answering `yes` (and all that --dry-run prints). */
import { describePosition } from '../core/position';
import type { ImportLine, ImportPlan } from './importPlan';

function line(l: ImportLine): string {
  const source =
    l.sourceAfter === undefined
      ? 'no source position'
      : `source: ${/^\d+$/.test(l.sourceAfter) ? 'after ' : ''}${l.sourceAfter}`;
  const existing = l.existing ? `; here: ${describePosition(l.existing.position)}` : '';
  switch (l.action) {
    case 'write':
      return `  ${l.shardId}: ${source} -> ${describePosition(l.to!)} [write: ${l.why}]`;
    case 'already imported':
      return `  ${l.shardId}: ${source} -> already imported`;
    default:
      return `  ${l.shardId}: ${source}${existing} -> ${l.action}: ${l.why}`;
  }
}

export function renderImportPlan(plan: ImportPlan, where: string, from: string, notes: readonly string[]): string {
  const lines = [`import into ${where} from ${from}:`];
  if (plan.lines.length === 0) lines.push('  the source has no shard');
  lines.push(...plan.lines.map(line));
  if (plan.createBootstrap)
    lines.push(
      `the application has never started: its bootstrap is created as its first start would (initialPosition ${JSON.stringify(plan.createBootstrap.initialPosition)}, first start now)`,
    );
  if (plan.leases.length > 0)
    lines.push(
      `leases held now (a spout is running): ${plan.leases.map((l) => `${l.shardId} by ${l.owner}`).join(', ')}`,
    );
  lines.push(...notes.map((n) => `note: ${n}`));
  return lines.join('\n');
}
