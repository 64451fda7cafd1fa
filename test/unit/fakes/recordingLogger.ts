/** A Logger that keeps what the spout said, for the test to look at. */
import type { Logger } from '../../../src/core/log';

export class RecordingLogger implements Logger {
  readonly lines: { level: number; message: string }[] = [];
  readonly errors: string[] = [];

  log(level: number, message: string): void {
    this.lines.push({ level, message });
  }

  error(message: string): void {
    this.errors.push(message);
  }

  said(fragment: string): boolean {
    return this.lines.some((l) => l.message.includes(fragment));
  }
}
