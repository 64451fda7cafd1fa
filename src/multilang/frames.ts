/**
 * Storm multilang framing: a JSON value followed by a line `end`. Input may arrive split anywhere or
 * many frames per read; output frames are always a single line of JSON.
 */
export class FrameDecoder {
  /** Pieces of the line not yet ended by a newline, joined once it ends: a long line costs its length once. */
  private pending: string[] = [];
  /** Complete lines of the frame being read. */
  private lines: string[] = [];
  /** Characters searched for newlines so far (each input character once); for tests of the decoder's cost. */
  scannedChars = 0;

  /** Feeds raw text; returns the complete frame bodies (unparsed) in order. */
  push(chunk: string): string[] {
    const frames: string[] = [];
    let start = 0;
    // Only the new text is searched: what came before holds no newline.
    for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
      this.scannedChars += nl + 1 - start;
      let line = chunk.slice(start, nl);
      if (this.pending.length > 0) {
        this.pending.push(line);
        line = this.pending.join('');
        this.pending = [];
      }
      start = nl + 1;
      if (line === 'end' || line === 'end\r') {
        // Storm's frames are single lines: skip the join for them.
        frames.push(this.lines.length === 1 ? this.lines[0] : this.lines.join('\n'));
        this.lines = [];
      } else {
        this.lines.push(line);
      }
    }
    this.scannedChars += chunk.length - start;
    if (start < chunk.length) this.pending.push(chunk.slice(start));
    return frames;
  }

  /** True when bytes of an unfinished frame are pending (useful to report truncation at EOF). */
  hasPartialFrame(): boolean {
    return this.pending.length > 0 || this.lines.some((l) => l.trim() !== '');
  }
}
