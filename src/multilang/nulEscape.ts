/**
 * Storm's direction of the compact format carries no NUL byte, so a NUL read from Storm is always the
 * stdin watchdog's wake-up (stdio.ts) and is dropped wherever it lands, even inside a frame that Storm
 * wrote in pieces. Storm's side (CompactFrames.java) writes each byte 0 of its frames as 1 1, each byte 1
 * as 1 2, and every other byte as itself. (The watchdog checks that a read is blocked and writes its NUL a
 * moment later: without the escaping, a frame Storm began in between would take that NUL as data.)
 */
import { ErrorCode, SpoutError } from '../errors';
import { hex } from './compact';

const ESCAPE = 1;

/** `bytes` as Storm's side writes them: no NUL byte. */
export function escapeNul(bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(bytes.length * 2);
  let n = 0;
  for (const b of bytes) {
    if (b <= ESCAPE) {
      out[n++] = ESCAPE;
      out[n++] = b + 1;
    } else out[n++] = b;
  }
  return out.subarray(0, n);
}

/** Undoes `escapeNul` for a stream read in any pieces, dropping every NUL byte. */
export class NulUnescaper {
  /** The last piece ended with the escape byte. */
  private escaped = false;
  private out = Buffer.allocUnsafe(0);

  /**
   * The frame bytes `chunk` holds: `chunk` itself when it holds nothing to undo, else a view of a buffer
   * reused by the next push. Throws BadFrame when the escape byte is followed by anything but 1 or 2.
   */
  push(chunk: Buffer): Buffer {
    if (!this.escaped && chunk.indexOf(ESCAPE) === -1 && chunk.indexOf(0) === -1) return chunk;
    if (this.out.length < chunk.length) this.out = Buffer.allocUnsafe(Math.max(chunk.length, 64 * 1024));
    const out = this.out;
    let escaped = this.escaped;
    let n = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === 0) continue;
      if (escaped) {
        if (b > 2)
          throw new SpoutError(
            ErrorCode.BadFrame,
            `compact stream: the escape byte 01 is followed by ${hex(b)} (only 01 or 02 may follow it)`,
          );
        out[n++] = b - 1;
        escaped = false;
      } else if (b === ESCAPE) escaped = true;
      else out[n++] = b;
    }
    this.escaped = escaped;
    return out.subarray(0, n);
  }
}
