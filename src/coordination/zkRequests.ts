/** Requests in flight to ZooKeeper, each settled within its bound, their answers credited to the session's trust. */
import type { Scheduler } from '../core/scheduler';
import { ErrorCode, SpoutError } from '../errors';
import type { SessionTrust } from './sessionTrust';
import { ANSWERED, Code, wrap, zkCode } from './zkErrors';

/** A write's answer comes from the leader; a read's from whichever server we are connected to. */
export type Kind = 'read' | 'write';
export type Reply<R> = (err: unknown, result?: R) => void;

export class BoundedRequests {
  /** Requests not settled yet, with their send time, so close and expiry settle them at once. */
  private readonly pending = new Map<number, { sentAt: number; fail(err: Error): void }>();
  private nextRequest = 0;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly trust: SessionTrust,
    /** True once the session is expired or closed: an answer then credits nothing. */
    private readonly over: () => boolean,
  ) {}

  /**
   * Sends one request and settles within `timeoutMs`: with its outcome code when a server handled it
   * (ANSWERED), rejected otherwise. A late reply still counts for trust (it was sent when we say) but
   * settles nothing.
   */
  send<R>(
    what: string,
    kind: Kind,
    send: (reply: Reply<R>) => void,
    timeoutMs: number,
  ): Promise<{ code: number; result?: R }> {
    const id = this.nextRequest++;
    const sentAt = this.scheduler.now();
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        cancel();
        this.pending.delete(id);
        return true;
      };
      const cancel = this.scheduler.after(Math.max(0, timeoutMs), () => {
        if (settle())
          reject(
            new SpoutError(ErrorCode.ZooKeeper, `ZooKeeper ${what}: no reply within ${Math.round(timeoutMs)} ms`, {
              retriable: true,
            }),
          );
      });
      this.pending.set(id, { sentAt, fail: (err) => settle() && reject(err) });
      const reply: Reply<R> = (err, result) => {
        const code = err ? zkCode(err) : Code.OK;
        if (code !== undefined && ANSWERED.has(code) && !this.over()) {
          const exchange = { sentAt, answeredAt: this.scheduler.now() };
          if (kind === 'write') this.trust.confirmedByLeader(exchange);
          else this.trust.answered(exchange);
        }
        if (!settle()) return;
        if (code !== undefined && ANSWERED.has(code)) resolve({ code, result });
        else reject(wrap(err, what));
      };
      try {
        send(reply);
      } catch (err) {
        // The client validates paths synchronously.
        if (settle()) reject(wrap(err, what));
      }
    });
  }

  /** Whether a request not settled yet was sent `ms` or longer ago. */
  waitingFor(now: number, ms: number): boolean {
    for (const request of this.pending.values()) if (now - request.sentAt >= ms) return true;
    return false;
  }

  /** Settles every pending request with `err`. */
  failAll(err: Error): void {
    for (const request of [...this.pending.values()]) request.fail(err);
  }
}
