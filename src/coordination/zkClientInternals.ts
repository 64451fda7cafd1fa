/** What node-zookeeper-client keeps to itself: its socket and its connection manager's state, to abandon a connection and to close for sure. */
import { Socket } from 'node:net';
import type zookeeper from 'node-zookeeper-client';
import type { Scheduler } from '../core/scheduler';

/** Connection manager states of node-zookeeper-client (lib/ConnectionManager.js). */
const MANAGER_CONNECTED = 2;
const MANAGER_CLOSED = -2;

/** The client has no read timeout and no way to abandon a connection: dropping its socket makes it reconnect. */
export function abandonConnection(client: zookeeper.Client): void {
  socketOf(client)?.destroy();
}

/** Whether the client could get CLOSE_SESSION through now. */
export function isConnected(client: zookeeper.Client): boolean {
  return managerState(client) === MANAGER_CONNECTED;
}

/**
 * Closes the client. Its close sends CLOSE_SESSION and waits for the server, and a reconnect attempt may be
 * under way: if the client is not closed after `graceMs`, its socket is abandoned (again, for a socket a
 * pending reconnect opens later), so that no connection outlives the session.
 */
export function closeClient(client: zookeeper.Client, scheduler: Scheduler, graceMs: number): void {
  try {
    client.close();
  } catch {
    // The client throws when closed before its first socket exists; the abandoning below finishes the job.
  }
  let tries = 0;
  const abandon = () => {
    if (managerState(client) === MANAGER_CLOSED || tries++ > 20) return;
    socketOf(client)?.destroy();
    scheduler.after(250, abandon);
  };
  scheduler.after(graceMs, abandon);
}

function socketOf(client: zookeeper.Client): Socket | undefined {
  const socket = (client as unknown as { connectionManager?: { socket?: unknown } }).connectionManager?.socket;
  return socket instanceof Socket ? socket : undefined;
}

function managerState(client: zookeeper.Client): number | undefined {
  const state = (client as unknown as { connectionManager?: { state?: unknown } }).connectionManager?.state;
  return typeof state === 'number' ? state : undefined;
}
