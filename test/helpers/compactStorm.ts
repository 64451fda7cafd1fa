/**
 * Storm's side of the compact wire format, in TypeScript, for tests: commands encoded as the Java
 * CompactSerializer writes them, and the process's frames decoded as it reads them.
 */
import { BodyReader, CommandTag, FrameCutter, FrameWriter, hex, ReplyTag } from '../../src/multilang/compact';
import { escapeNul } from '../../src/multilang/nulEscape';

export type StormCommand =
  | { command: 'next' | 'activate' | 'deactivate' | 'acks'; acks?: unknown[] }
  | { command: 'fail'; id: unknown; acks?: unknown[] }
  | { command: 'taskIds'; ids: number[] };

const TAGS = {
  next: CommandTag.Next,
  acks: CommandTag.Acks,
  fail: CommandTag.Fail,
  activate: CommandTag.Activate,
  deactivate: CommandTag.Deactivate,
} as const;

/** Commands as the Java side writes them: frames, their NUL bytes escaped. */
export function encodeCommands(commands: StormCommand[]): Buffer {
  const w = new FrameWriter();
  for (const c of commands) {
    if (c.command === 'taskIds') {
      w.begin(CommandTag.TaskIds);
      w.u32(c.ids.length);
      for (const id of c.ids) w.i32(id);
      w.end();
      continue;
    }
    w.begin(TAGS[c.command]);
    const acks = c.acks ?? [];
    w.u32(acks.length);
    for (const id of acks) w.value(id);
    if (c.command === 'fail') w.value(c.id);
    w.end();
  }
  return escapeNul(w.take());
}

/** A frame from the process, as the Java side turns it into a ShellMsg. */
export type ProcessFrame =
  | { command: 'sync' }
  | { command: 'emit'; id: unknown; stream: string; task: number; needTaskIds: boolean; tuple: unknown[] }
  | { command: 'log'; level: number; msg: string }
  | { command: 'error'; msg: string }
  | { command: 'metrics'; name: string; params: unknown };

/** Reads the process's frames from a stream in any pieces. */
export class ProcessFrames {
  private readonly cutter = new FrameCutter();

  push(chunk: Buffer): ProcessFrame[] {
    const out: ProcessFrame[] = [];
    this.cutter.push(chunk, ({ tag, buf, start, end }) => {
      const r = new BodyReader(buf, start, end);
      switch (tag) {
        case ReplyTag.Sync:
          out.push({ command: 'sync' });
          break;
        case ReplyTag.Emit: {
          const needTaskIds = (r.u8() & 1) === 1;
          const id = r.value();
          const stream = r.text() || 'default';
          const task = r.i32();
          const tuple: unknown[] = [];
          for (let n = r.u32(); n > 0; n--) tuple.push(r.value());
          out.push({ command: 'emit', id, stream, task, needTaskIds, tuple });
          break;
        }
        case ReplyTag.Log:
          out.push({ command: 'log', level: r.u8(), msg: r.text() });
          break;
        case ReplyTag.Error:
          out.push({ command: 'error', msg: r.text() });
          break;
        case ReplyTag.Metrics:
          out.push({ command: 'metrics', name: r.text(), params: r.value() });
          break;
        default:
          throw new Error(`unknown reply tag 0x${hex(tag)}`);
      }
      if (!r.done) throw new Error(`bytes left in reply frame 0x${hex(tag)}`);
    });
    return out;
  }

  hasPartialFrame(): boolean {
    return this.cutter.hasPartialFrame();
  }
}
