/** The demo's live line (scripts/demo.ts): put, received and lag, and why nothing is received at first. */

export interface DemoProgress {
  put: number;
  received: number;
  lag: number;
}

/** Wide enough to blank the longest line when a shorter one is drawn over it with `\r`. */
const WIDTH = 100;

/**
 * Until the first record arrives, LocalCluster is still starting its workers and the spout processes
 * (about 10 s): `received 0` alone would look like a spout that reads nothing.
 */
export function demoLine(p: DemoProgress): string {
  const waiting = p.received === 0 ? '  (waiting for the topology to start: LocalCluster takes about 10 s)' : '';
  return `put ${p.put}  received ${p.received}  lag ${p.lag}${waiting}`.padEnd(WIDTH);
}
