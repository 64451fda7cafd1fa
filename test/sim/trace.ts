/**
 * The event trace of one run: what happened, when (virtual ms), to whom. A replay prints all of it as it
 * goes; otherwise only recent lines are kept, and a failure report shows the last ones with the tuple
 * traffic (emit, ack, fail, put) only for the very end, so the faults and decisions before it stay in view.
 */
const RECENT_TRAFFIC = 40;

interface Line {
  text: string;
  traffic: boolean;
}

export class Trace {
  private lines: Line[] = [];

  constructor(
    private readonly clock: () => number,
    /** Lines a failure report shows (Infinity: keep everything). */
    private readonly keep: number,
    private readonly echo?: (line: string) => void,
  ) {}

  add(who: string, what: string, traffic = false): void {
    const text = `${String(Math.round(this.clock())).padStart(7)} ${who.padEnd(8)} ${what}`;
    this.echo?.(text);
    this.lines.push({ text, traffic });
    // Traffic outnumbers everything else: keep enough history for `keep` lines of the rest.
    if (this.lines.length > this.keep * 40) this.lines = this.lines.slice(this.lines.length - this.keep * 20);
  }

  /** The last `count` lines, tuple traffic only from the last few. */
  tail(count: number): string[] {
    const out: string[] = [];
    for (let i = this.lines.length - 1; i >= 0 && out.length < count; i -= 1) {
      const line = this.lines[i];
      if (!line.traffic || i >= this.lines.length - RECENT_TRAFFIC) out.push(line.text);
    }
    return out.reverse();
  }
}
