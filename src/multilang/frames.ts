/**
 * Storm multilang framing: a JSON value followed by a line `end`. Input may arrive split anywhere or
 * many frames per read; output frames are always a single line of JSON.
 */
export class FrameDecoder {
  private partial = '';
  private lines: string[] = [];

  /** Feeds raw text; returns the complete frame bodies (unparsed) in order. */
  push(chunk: string): string[] {
    const frames: string[] = [];
    const text = this.partial + chunk;
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      const line = text.slice(start, nl);
      start = nl + 1;
      if (line === 'end' || line === 'end\r') {
        // Storm's frames are single lines: skip the join for them.
        frames.push(this.lines.length === 1 ? this.lines[0] : this.lines.join('\n'));
        this.lines = [];
      } else {
        this.lines.push(line);
      }
    }
    this.partial = text.slice(start);
    return frames;
  }

  /** True when bytes of an unfinished frame are pending (useful to report truncation at EOF). */
  hasPartialFrame(): boolean {
    return this.partial.length > 0 || this.lines.some((l) => l.trim() !== '');
  }
}


