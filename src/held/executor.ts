/**
 * Carries out a shard's lifecycle: feeds an event to `transition`, assigns the phase it gives (the only
 * place a shard's phase changes) and does its effects through the injected `ShardWorld`; an effect's
 * outcome (a write done, refused or failed) comes back as the next event.
 */
import { describeError } from '../errors';
import { LogLevel } from '../core/log';
import type { ShardNode } from '../core/shard';
import { transition, type ReadPosition, type ShardEffect, type ShardEvent, type ShardPhase } from './lifecycle';

/** What the executor needs of a shard: its id, and its phase to read and assign. */
export interface LifecycleShard {
  readonly shardId: string;
  readonly phase: ShardPhase;
  /** Takes the phase a transition gave: called here only. */
  enter(phase: ShardPhase): void;
}

export type LetGo = Extract<ShardEffect, { kind: 'letGo' }>;

/** Everything an effect touches: the reader, ZooKeeper, the set of held shards, the log. */
export interface ShardWorld<S extends LifecycleShard> {
  now(): number;
  startReader(shard: S, from: ReadPosition): void;
  pauseReader(shard: S): void;
  resumeReader(shard: S): void;
  /** Resolves when the reader has no request in flight. */
  stopReader(shard: S): Promise<void>;
  /** Forgets what was prefetched and not emitted (the next holder reads it again). */
  dropBuffer(shard: S): void;
  /** A shard was read to its end: the listing learns its children from `ChildShards`, or lists again without them. */
  learnChildren(shard: S, children: readonly ShardNode[]): void;
  /** Moves the checkpoint to what is acked, only if that is ahead of what is stored (compare-and-set). */
  writeCheckpoint(shard: S): Promise<void>;
  /** SHARD_END, the finished marker and the lease's delete, at once; false when the checkpoint changed under us. */
  writeShardEnd(shard: S): Promise<boolean>;
  /** The "every record emitted" marker (ordering "parents-emitted"). */
  markEnded(shard: S): Promise<void>;
  /** Deletes the lease if it is still ours. */
  deleteLease(shard: S): Promise<void>;
  /** The shard is no longer held here. */
  letGo(shard: S, how: LetGo): void;
  /** The assignment should look again (a shard finished or was given back). */
  changed(): void;
  /** A write failed; it is retried (the world says so, and how loud). */
  writeFailed(what: string, shard: S, err: unknown): void;
  log(level: LogLevel, message: string): void;
}

/** Applies `event` to the shard; resolves once its effects, and the events their outcomes raise, are done. */
export async function execute<S extends LifecycleShard>(
  world: ShardWorld<S>,
  shard: S,
  event: ShardEvent,
): Promise<void> {
  const { phase, effects } = transition(shard.phase, event);
  shard.enter(phase);
  // Started in order at once (the world queues a shard's writes in that order); awaited together.
  await Promise.all(effects.map((effect) => perform(world, shard, effect)));
}

async function perform<S extends LifecycleShard>(world: ShardWorld<S>, shard: S, effect: ShardEffect): Promise<void> {
  const { shardId } = shard;
  const failed = (what: string, err: unknown) => {
    world.writeFailed(what, shard, err);
    return execute(world, shard, { kind: 'writeFailed', now: world.now() });
  };
  switch (effect.kind) {
    case 'startReader':
      return world.startReader(shard, effect.from);
    case 'stopReader':
      return world.stopReader(shard);
    case 'pauseReader':
      return world.pauseReader(shard);
    case 'resumeReader':
      return world.resumeReader(shard);
    case 'dropBuffer':
      return world.dropBuffer(shard);
    case 'learnChildren':
      return world.learnChildren(shard, effect.children);
    case 'changed':
      return world.changed();
    case 'letGo':
      return world.letGo(shard, effect);
    case 'markEnded':
      try {
        await world.markEnded(shard);
      } catch (err) {
        world.log(LogLevel.Warn, `could not mark ${shardId} as fully emitted: ${describeError(err)}`);
        await execute(world, shard, { kind: 'endAnnounceFailed' });
      }
      return;
    case 'writeCheckpoint':
      try {
        await world.writeCheckpoint(shard);
      } catch (err) {
        if (effect.final) return failed(`releasing ${shardId}`, err);
        world.writeFailed(`writing the checkpoint of ${shardId}`, shard, err);
        return;
      }
      if (effect.final) await execute(world, shard, { kind: 'checkpointWritten' });
      return;
    case 'writeShardEnd': {
      let done: boolean;
      try {
        done = await world.writeShardEnd(shard);
      } catch (err) {
        return failed(`finishing ${shardId}`, err);
      }
      // A lost reply may have applied it already; otherwise the checkpoint moved under us. Either way the next holder knows.
      if (!done)
        world.log(
          LogLevel.Warn,
          `${shardId}: SHARD_END not written (the checkpoint changed under us, or an earlier try got through); giving the lease back`,
        );
      return execute(world, shard, { kind: done ? 'shardEndWritten' : 'shardEndRefused' });
    }
    case 'deleteLease':
      try {
        await world.deleteLease(shard);
      } catch (err) {
        if (effect.atExit) return;
        return failed(`giving the lease on ${shardId} back`, err);
      }
      if (!effect.atExit) await execute(world, shard, { kind: 'leaseDeleted' });
      return;
  }
}
