/**
 * What the spout process is doing, and so how it answers Storm. Whatever happens, every command gets its
 * `sync`: a process that stops answering (or exits) while its worker still sends commands takes the
 * whole worker down, and every executor in it ("Halting process: Worker died").
 */
export type Lifecycle =
  /** Before Storm's handshake. */
  | { kind: 'starting' }
  | { kind: 'running' }
  /**
   * Cannot read (a bad configuration, a crash): emits nothing, answers every command with `sync`, and
   * repeats why now and then. Exiting would make Storm restart the worker, over and over.
   */
  | { kind: 'failed'; reason: string; reportedAt: number }
  /**
   * Told to stop (SIGTERM, SIGINT): checkpoints flushed and leases given up at once, then only `sync`
   * until stdin closes (the worker is gone), or STOPPING_EXIT_AFTER_MS passed.
   */
  | { kind: 'stopping'; why: string };

/** How often a process that cannot read repeats why, in Storm's log and UI. */
export const FAILED_REPEAT_MS = 5 * 60_000;
/**
 * How long a stopping process waits for Storm to close its stdin. The supervisor sends SIGTERM to the
 * worker and to us at the same moment, and kills both for good after `supervisor.worker.shutdown.sleep.secs`
 * (3 s by default); ShellSpout.close() closes our stdin right after its SIGTERM.
 */
export const STOPPING_EXIT_AFTER_MS = 30_000;

/** True when a command must be answered with a bare `sync` (nothing emitted, nothing handled). */
export function answersOnlySync(state: Lifecycle): boolean {
  return state.kind === 'failed' || state.kind === 'stopping';
}

/** True when the failure should be said again with this command's reply. */
export function failureDue(state: Lifecycle, now: number): boolean {
  return state.kind === 'failed' && now - state.reportedAt >= FAILED_REPEAT_MS;
}

/** The words for Storm's UI when the process cannot read: the cause, then what it does and what to do. */
export function failureReport(reason: string): string {
  return `${reason}. This spout task emits nothing until the topology is redeployed with that fixed; it stays alive, answering Storm, so that its worker and the other executors in it keep running`;
}
