/**
 * Joining: a new ZooKeeper session, the state layout, the stream's identity checked against the bootstrap
 * record (created by the application's first start), and this task registered as a member. Bounded as a
 * whole: a join that cannot finish closes its session and fails, and the caller tries again.
 */
import type { SpoutConfig } from '../config/config';
import { zooKeeperOptions } from '../coordination/sessionOptions';
import { memberIdOf } from '../coordination/layout';
import { CoordinationStore, basePath } from '../coordination/store';
import { identityMismatch } from '../coordination/streamIdentity';
import type { ConnectionState, ConnectZooKeeper, ZooKeeper } from '../coordination/zooKeeper';
import { startPositions } from '../core/position';
import type { Session } from '../coordination/session';
import type { MemberPresence } from '../coordination/store';
import { within, type Scheduler } from '../core/scheduler';
import { joinTimeoutMs } from '../core/timings';
import type { ShardNode } from '../core/shard';
import { ErrorCode, SpoutError } from '../errors';
import type { KinesisApi } from '../kinesis/client';
import { describeStream, type StreamRef } from '../kinesis/shards';

export interface Member {
  taskIndex: number;
  /** Spout tasks the topology declares for this component (shares during the start grace). */
  taskCount: number;
  host: string;
  pid: number;
  /** Storm's topology id (`storm.id` in the handshake's conf), when Storm gave one. */
  topology?: string;
}

export interface JoinDeps {
  config: SpoutConfig;
  kinesis: KinesisApi;
  zookeeper: ConnectZooKeeper;
  scheduler: Scheduler;
  member: Member;
  /** This task's topology state now, written into its member node. */
  presence(): MemberPresence;
  stream: StreamRef;
  /** An unfiltered listing (the coordinator counts the calls). */
  listShards(): Promise<ShardNode[]>;
  /** State changes of the new session, from the moment it is connected. */
  onState(zk: ZooKeeper, state: ConnectionState): void;
}

export async function joinSession(deps: JoinDeps): Promise<{ session: Session; shards: ShardNode[] }> {
  let zk: ZooKeeper | undefined;
  let abandoned = false;
  const join = async () => {
    const { config, member } = deps;
    const connected = await deps.zookeeper({
      ...zooKeeperOptions(config),
      onState: (state) => zk && deps.onState(zk, state),
    });
    if (abandoned) {
      connected.close();
      throw new SpoutError(ErrorCode.ZooKeeper, 'join timed out', { retriable: true });
    }
    zk = connected;
    const memberId = memberIdOf(member.taskIndex, member.host, member.pid, connected.sessionId);
    const store = new CoordinationStore(
      connected,
      basePath(config.zookeeper.root, config.applicationName, deps.stream.streamName),
      memberId,
    );
    await store.ensureLayout();
    const identity = await describeStream(deps.kinesis, deps.stream);
    const shards = await deps.listShards();
    const bootstrap = await store.bootstrap({
      v: 1,
      firstStartMs: deps.scheduler.wallNow(),
      initialPosition: config.initialPosition,
      streamArn: identity.streamArn,
      streamCreatedMs: identity.createdMs,
      shardsAtStart: shards.map((s) => s.shardId),
      openAtStart: shards.filter((s) => !s.closed).map((s) => s.shardId),
    });
    const mismatch = identityMismatch(bootstrap, identity, store.base);
    if (mismatch) throw mismatch;
    await store.registerMember({ taskIndex: member.taskIndex, host: member.host, pid: member.pid, ...deps.presence() });
    // An expiry while joining is only seen here: the session's state callbacks name it once it is current.
    if (connected.connectionState !== 'connected')
      throw new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper session ${connected.sessionId} was lost while joining`, {
        retriable: true,
      });
    return {
      session: { zk: connected, store, bootstrap, startOf: startPositions(bootstrap), joinedAt: deps.scheduler.now() },
      shards,
    };
  };
  const timeoutMs = joinTimeoutMs(deps.config.zookeeper.sessionTimeoutMs);
  try {
    return await within(
      deps.scheduler,
      timeoutMs,
      join(),
      () => new SpoutError(ErrorCode.ZooKeeper, `joining did not finish within ${timeoutMs} ms`, { retriable: true }),
    );
  } catch (err) {
    abandoned = true;
    zk?.close();
    throw err;
  }
}
