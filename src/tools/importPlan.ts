/**
 * Pure: what an import writes, shard by shard, from the source's positions and this application's state.
 *   a listed shard the source has a position for   -> AFTER <sequence number> (both sources resume after it);
 *   a listed descendant of such a shard, which the source has no position for
 *                                                  -> TRIM_HORIZON: its records all come after its parent's;
 *   a shard the source never saw                   -> nothing: it starts by the application's initial position;
 *   a source shard the stream no longer lists      -> nothing: expired, nothing of it is left to read.
 * Nothing is marked finished: neither source marks a shard finished, and the listing cannot prove that a
 * stored position is a closed shard's last record; the spout proves it with one GetRecords (no next
 * iterator, invariant 8) and only then are the children read, so parents first holds as always.
 * A checkpoint this application already has is never moved unless `overwrite`, and never off SHARD_END (nor
 * off an ended shard's: its children may be read already).
 */
import { compareAfter, describePosition, type Bootstrap, type Position, startPositions } from '../core/position';
import type { InitialPosition } from '../core/position';
import type { ShardNode } from '../core/shard';
import { parentsFirst } from './resetPlan';

export interface ImportFacts {
  listing: ShardNode[];
  /** This application's checkpoints, with the version read (compare-and-set). */
  checkpoints: ReadonlyMap<string, { position: Position; version: number }>;
  finished: ReadonlySet<string>;
  /** Shards every record of which was emitted (ordering parents-emitted): their children may be read already. */
  ended: ReadonlySet<string>;
  /** Lease holder by shard. */
  leases: ReadonlyMap<string, string>;
  /** Undefined when the application never started: the import creates it. */
  bootstrap: Bootstrap | undefined;
  /** The stream now, for a bootstrap the import creates. */
  identity: { streamArn: string; createdMs: number };
}

export interface ImportSource {
  /** Resume after this sequence number, by shard. */
  positions: ReadonlyMap<string, string>;
  /** Sources whose positions are more than "after a record" (KCL: sentinels, KPL sub-sequences): the position, and the source's own words for it. */
  targets?: ReadonlyMap<string, { to: Position; text: string }>;
  withoutPosition: ReadonlySet<string>;
}

export type ImportAction = 'write' | 'already imported' | 'kept' | 'skipped';

export interface ImportLine {
  shardId: string;
  /** The source's position: resume after this sequence number (digits), or the source's own words for it. */
  sourceAfter: string | undefined;
  action: ImportAction;
  /** What is written (action `write`), or what the import would write (`kept`). */
  to?: Position;
  /** The stored checkpoint and its version (set at that version); undefined: created. */
  existing?: { position: Position; version: number };
  why: string;
}

export interface ImportPlan {
  /** Listed shards parents first, then the source's shards the stream no longer lists. */
  lines: ImportLine[];
  /** The bootstrap the import creates (as the spout's first start would), when there is none. */
  createBootstrap: Bootstrap | undefined;
  leases: { shardId: string; owner: string }[];
}

export const writes = (plan: ImportPlan): ImportLine[] => plan.lines.filter((l) => l.action === 'write');

function samePosition(a: Position, b: Position): boolean {
  if (a.kind === 'AFTER' && b.kind === 'AFTER') return compareAfter(a, b) === 0;
  return (
    a.kind === b.kind && (a.kind !== 'AT_TIMESTAMP' || b.kind !== 'AT_TIMESTAMP' || a.timestampMs === b.timestampMs)
  );
}

/** Listed shards with an ancestor (in the listing) that the source has a position for. */
function descendantsOfImported(listing: readonly ShardNode[], imported: ReadonlySet<string>): Map<string, string> {
  const parentsOf = new Map(listing.map((s) => [s.shardId, s.parents]));
  const found = new Map<string, string>();
  const ancestorOf = (id: string, seen: Set<string>): string | undefined => {
    for (const parent of parentsOf.get(id) ?? []) {
      if (seen.has(parent)) continue;
      seen.add(parent);
      if (imported.has(parent)) return parent;
      const further = ancestorOf(parent, seen);
      if (further) return further;
    }
    return undefined;
  };
  for (const shard of listing) {
    const ancestor = ancestorOf(shard.shardId, new Set());
    if (ancestor) found.set(shard.shardId, ancestor);
  }
  return found;
}

export function planImport(
  facts: ImportFacts,
  source: ImportSource,
  options: { overwrite: boolean; nowMs: number; initialPosition: InitialPosition },
): ImportPlan {
  const listed = new Set(facts.listing.map((s) => s.shardId));
  const targets = source.targets ?? new Map<string, { to: Position; text: string }>();
  const imported = new Set([...source.positions.keys(), ...targets.keys()].filter((id) => listed.has(id)));
  const descendants = descendantsOfImported(facts.listing, imported);
  const lines: ImportLine[] = [];
  for (const shardId of parentsFirst(facts.listing)) {
    const target = targets.get(shardId);
    const seq = target ? target.text : source.positions.get(shardId);
    const ancestor = descendants.get(shardId);
    let to: Position;
    let reason: string;
    if (target) {
      to = target.to;
      reason = `the source's checkpoint ${target.text}`;
    } else if (seq !== undefined) {
      to = { kind: 'AFTER', sequenceNumber: seq };
      reason = 'the source resumes after this record';
    } else if (ancestor !== undefined) {
      to = { kind: 'TRIM_HORIZON' };
      reason = `no position in the source; a descendant of ${ancestor}, so all of it comes after the imported position`;
    } else {
      if (source.withoutPosition.has(shardId))
        lines.push({
          shardId,
          sourceAfter: undefined,
          action: 'skipped',
          why: 'the source stored no position for it: starts by the initial position',
        });
      continue;
    }
    const existing = facts.checkpoints.get(shardId);
    if (existing && samePosition(existing.position, to)) {
      lines.push({ shardId, sourceAfter: seq, action: 'already imported', to, existing, why: 'already imported' });
      continue;
    }
    // An ended shard (ordering parents-emitted) may have children read already: moving it back breaks their order.
    const done = existing?.position.kind === 'SHARD_END' || facts.ended.has(shardId);
    if (existing && (!options.overwrite || done || seq === undefined)) {
      const why = done
        ? `${existing.position.kind === 'SHARD_END' ? 'finished (SHARD_END)' : 'every record emitted (ended)'} here: the import never reopens a shard; use reset`
        : seq === undefined
          ? 'has a checkpoint: a descendant keeps it'
          : 'has a checkpoint: kept (--overwrite replaces it)';
      lines.push({ shardId, sourceAfter: seq, action: 'kept', to, existing, why });
      continue;
    }
    if (!existing && facts.finished.has(shardId)) {
      lines.push({
        shardId,
        sourceAfter: seq,
        action: 'kept',
        to,
        why: 'finished here: the import never reopens a shard',
      });
      continue;
    }
    if (!existing && facts.bootstrap && startPositions(facts.bootstrap)(shardId).kind === 'SHARD_END') {
      lines.push({
        shardId,
        sourceAfter: seq,
        action: 'skipped',
        why: "closed before this application's first start with initialPosition LATEST: the spout counts it as finished; use reset to read it",
      });
      continue;
    }
    lines.push({
      shardId,
      sourceAfter: seq,
      action: 'write',
      to,
      existing,
      why: existing ? `replaces ${describePosition(existing.position)} (--overwrite); ${reason}` : reason,
    });
  }
  for (const shardId of [...source.positions.keys(), ...targets.keys()].filter((id) => !listed.has(id)).sort())
    lines.push({
      shardId,
      sourceAfter: targets.get(shardId)?.text ?? source.positions.get(shardId),
      action: 'skipped',
      why: 'not listed by the stream: expired (past retention), nothing of it is left to read',
    });
  for (const shardId of [...source.withoutPosition].filter((id) => !listed.has(id)).sort())
    lines.push({
      shardId,
      sourceAfter: undefined,
      action: 'skipped',
      why: 'no position in the source, and not listed',
    });
  const written = new Set(lines.filter((l) => l.action === 'write').map((l) => l.shardId));
  const leases = [...facts.leases]
    .map(([shardId, owner]) => ({ shardId, owner }))
    .sort((a, b) => (a.shardId < b.shardId ? -1 : 1));
  return { lines, createBootstrap: facts.bootstrap ? undefined : bootstrapFor(facts, written, options), leases };
}

/**
 * The bootstrap the spout's first start would write now, except that the shards the import positions are
 * left out of the shards "at start": their checkpoint decides, and a closed one must not count as finished
 * under a LATEST initial position (which treats shards closed at the first start as never to be read).
 */
function bootstrapFor(
  facts: ImportFacts,
  written: ReadonlySet<string>,
  options: { nowMs: number; initialPosition: InitialPosition },
): Bootstrap {
  const atStart = facts.listing.filter((s) => !written.has(s.shardId));
  return {
    v: 1,
    firstStartMs: options.nowMs,
    initialPosition: options.initialPosition,
    streamArn: facts.identity.streamArn,
    streamCreatedMs: facts.identity.createdMs,
    shardsAtStart: atStart.map((s) => s.shardId),
    openAtStart: atStart.filter((s) => !s.closed).map((s) => s.shardId),
  };
}
