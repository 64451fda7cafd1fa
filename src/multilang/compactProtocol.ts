/**
 * The spout's side of the compact wire format: Storm's commands read from frames, and the replies written
 * as frames, behind the same methods as the JSON path's StormOutput.
 */
import { ErrorCode, SpoutError } from '../errors';
import { LogLevel } from '../core/log';
import { BodyReader, CommandTag, FrameWriter, hex, type RawFrame, ReplyTag } from './compact';
import type { SpoutCommand, StormOutput } from './protocol';

/** What the spout's code says to Storm, whichever the wire format. */
export type SpoutOutput = Pick<
  StormOutput,
  'beginCommand' | 'sync' | 'emit' | 'emitUnanchored' | 'log' | 'error' | 'metrics'
>;

/**
 * One frame from Storm: the acks its side deferred (to be handled first, in order), then the command, or
 * none when the frame carries acks alone. `taskIds` answers an emit that asked for them (this spout never does).
 */
export interface CompactCommand {
  acks: unknown[];
  command: SpoutCommand | { command: 'acks' } | { command: 'taskIds'; ids: number[] };
}

export function parseCompactCommand(frame: RawFrame): CompactCommand {
  const body = new BodyReader(frame.buf, frame.start, frame.end);
  if (frame.tag === CommandTag.TaskIds) {
    const ids: number[] = [];
    for (let n = body.u32(); n > 0; n--) ids.push(body.i32());
    finished(body, frame.tag);
    return { acks: [], command: { command: 'taskIds', ids } };
  }
  const acks: unknown[] = [];
  const named = commandOf(frame.tag);
  for (let n = body.u32(); n > 0; n--) acks.push(body.value());
  const command: CompactCommand['command'] =
    named === 'fail' ? { command: 'fail', id: body.value() } : { command: named };
  finished(body, frame.tag);
  return { acks, command };
}

function commandOf(tag: number): 'next' | 'acks' | 'fail' | 'activate' | 'deactivate' {
  switch (tag) {
    case CommandTag.Next:
      return 'next';
    case CommandTag.Acks:
      return 'acks';
    case CommandTag.Fail:
      return 'fail';
    case CommandTag.Activate:
      return 'activate';
    case CommandTag.Deactivate:
      return 'deactivate';
    default:
      throw new SpoutError(ErrorCode.BadFrame, `compact frame: unknown command tag 0x${hex(tag)}`);
  }
}

function finished(body: BodyReader, tag: number): void {
  if (!body.done)
    throw new SpoutError(ErrorCode.BadFrame, `compact frame 0x${hex(tag)}: bytes left over after its last field`);
}

/** The sync frame, encoded once. */
const SYNC = Buffer.from([ReplyTag.Sync, 0, 0, 0, 0]);

/**
 * StormOutput's counterpart: frames produced while a command is handled go out in one write with its
 * sync; anything said outside a command is written at once. (The pid went out before, as JSON.)
 */
export class CompactOutput implements SpoutOutput {
  private readonly frames = new FrameWriter();
  private inCommand = false;

  /** `write` gets a view of a buffer reused after it returns; `reply` as StormOutput's. */
  constructor(private readonly write: (bytes: Buffer, reply: boolean) => void) {}

  beginCommand(): void {
    this.inCommand = true;
  }

  sync(): void {
    this.inCommand = false;
    if (this.frames.length === 0) return this.write(SYNC, true);
    this.frames.frame(ReplyTag.Sync);
    this.flush(true);
  }

  /** Without an id (the untracked delivery modes) the tuple is unanchored: Storm acks it at once. */
  emit(id: string | undefined, tuple: unknown[], stream: string): void {
    this.emitFrame(id ?? null, tuple, stream);
  }

  emitUnanchored(tuple: unknown[], stream: string): void {
    this.emitFrame(null, tuple, stream);
  }

  log(msg: string, level: LogLevel = LogLevel.Info): void {
    const f = this.frames;
    f.begin(ReplyTag.Log);
    f.u8(level);
    f.text(msg);
    f.end();
    this.said();
  }

  error(msg: string): void {
    this.frames.begin(ReplyTag.Error);
    this.frames.text(msg);
    this.frames.end();
    this.said();
  }

  metrics(name: string, params: unknown): void {
    this.frames.begin(ReplyTag.Metrics);
    this.frames.text(name);
    this.frames.value(params);
    this.frames.end();
    this.said();
  }

  private emitFrame(id: string | null, tuple: unknown[], stream: string): void {
    const f = this.frames;
    f.begin(ReplyTag.Emit);
    f.u8(0); // need_task_ids: false
    f.value(id);
    f.text(stream === 'default' ? '' : stream);
    f.i32(0); // not a direct emit
    f.u32(tuple.length);
    for (const value of tuple) f.value(value);
    f.end();
    this.said();
  }

  private said(): void {
    if (!this.inCommand) this.flush(false);
  }

  private flush(reply: boolean): void {
    if (this.frames.length === 0) return;
    this.write(this.frames.take(), reply);
  }
}
