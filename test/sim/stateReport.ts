/** Who holds what, as the ZooKeeper server and each process see it: printed when a run does not converge. */
import type { SimStream } from './kinesis/simStream';
import { BASE } from './simConfig';
import type { SpoutProcess } from './spoutProcess';
import type { ZkServer } from './zooKeeper/zkServer';

/**
 * The process's own view of a shard. Internals of the code under test may change shape; the report is
 * for people, so it says "?" rather than fail.
 */
function localPhase(p: SpoutProcess, shardId: string): string | undefined {
  try {
    return p.coordinator.shards.get(shardId)?.phase.kind;
  } catch {
    return '?';
  }
}

function localShards(p: SpoutProcess): string {
  try {
    return [...p.coordinator.shards.values()].map((s) => `${s.shardId}:${s.phase.kind}`).join(', ') || 'nothing';
  } catch {
    return '?';
  }
}

export function describeState(
  stream: SimStream,
  server: ZkServer,
  processes: readonly (SpoutProcess | undefined)[],
): string[] {
  const lines: string[] = [];
  const holderOf = (session: string) => processes.find((p) => p?.sessions.has(session));
  for (const shard of stream.shards.values()) {
    const checkpoint = server.node(`${BASE}/checkpoints/${shard.shardId}`)?.data.toString('utf8') ?? '(none)';
    const lease = server.node(`${BASE}/leases/${shard.shardId}`);
    const holder = lease && holderOf(lease.ephemeralOwner);
    const local = holder && localPhase(holder, shard.shardId);
    const held = holder
      ? `${holder.name}, ${holder.owner.state.kind}, ${local ? `holds it: ${local}` : 'does NOT hold it locally'}`
      : 'no live process';
    const leaseText = lease
      ? `lease: session ${lease.ephemeralOwner} (${held}${server.isAlive(lease.ephemeralOwner) ? '' : ', session dead'})`
      : 'lease: none';
    const parents = shard.parents.length ? ` parents ${shard.parents.join('+')}` : '';
    // Owner and time stamps only make lines longer.
    const stored = checkpoint.replace(/"(owner|updatedAt)":"[^"]*",?/g, '');
    lines.push(
      `${shard.shardId}${parents} ${shard.endingSequenceNumber ? 'closed' : 'open'} ${shard.records.length} records; ${leaseText}; checkpoint ${stored}`,
    );
  }
  for (const p of processes) {
    if (!p) continue;
    const sessions = [...p.sessions].map((id) => `${id}${server.isAlive(id) ? '' : '(dead)'}`).join(', ');
    const holds = localShards(p);
    lines.push(`${p.name} ${p.owner.state.kind}${p.stopping ? ' stopping' : ''}: sessions ${sessions}; holds ${holds}`);
  }
  return lines;
}
