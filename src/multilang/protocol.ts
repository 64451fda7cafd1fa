/** The shapes Storm's ShellSpout sends and expects, and the decisions taken from the handshake. */
import { ErrorCode, SpoutError } from '../errors';
import { isObject } from '../core/json';
import { LogLevel } from '../core/log';

export interface TopologyContext {
  taskid: number;
  componentid: string;
  'task->component': Record<string, string>;
  'stream->outputfields'?: Record<string, string[]>;
}

export interface Handshake {
  pidDir: string;
  conf: Record<string, unknown>;
  context: TopologyContext;
}

export type SpoutCommand =
  | { command: 'next' }
  | { command: 'ack'; id: unknown }
  | { command: 'fail'; id: unknown }
  | { command: 'activate' }
  | { command: 'deactivate' };

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch (err) {
    throw new SpoutError(ErrorCode.BadFrame, `frame is not JSON: ${truncate(body)}`, { cause: err });
  }
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

export function parseHandshake(body: string): Handshake {
  const value = parseJson(body);
  if (!isObject(value) || typeof value.pidDir !== 'string' || !isObject(value.context)) {
    throw new SpoutError(ErrorCode.BadFrame, `handshake must carry pidDir, conf and context: ${truncate(body)}`);
  }
  const context = value.context;
  if (
    typeof context.taskid !== 'number' ||
    typeof context.componentid !== 'string' ||
    !isObject(context['task->component'])
  ) {
    throw new SpoutError(ErrorCode.BadFrame, 'handshake context must carry taskid, componentid and task->component');
  }
  return {
    pidDir: value.pidDir,
    conf: isObject(value.conf) ? value.conf : {},
    context: context as unknown as TopologyContext,
  };
}

/**
 * The frames Storm sends most, `ack` and `fail` with a plain string id, read without JSON.parse: as
 * ShellSpout writes them (json-simple serializes its HashMap with `id` first) and with `command` first.
 * Anything else (an escape, a control character, another shape) takes the general path, so what a frame
 * means does not depend on which path read it.
 */
const PLAIN_ID = '"([^"\\\\\\u0000-\\u001f]*)"';
const OUTCOME_ID_FIRST = new RegExp(`^\\{"id":${PLAIN_ID},"command":"(ack|fail)"\\}$`);
const OUTCOME_COMMAND_FIRST = new RegExp(`^\\{"command":"(ack|fail)","id":${PLAIN_ID}\\}$`);

export function parseCommand(body: string): SpoutCommand {
  const idFirst = OUTCOME_ID_FIRST.exec(body);
  if (idFirst) return { command: idFirst[2] as 'ack' | 'fail', id: idFirst[1] };
  const commandFirst = OUTCOME_COMMAND_FIRST.exec(body);
  if (commandFirst) return { command: commandFirst[1] as 'ack' | 'fail', id: commandFirst[2] };
  const value = parseJson(body);
  if (!isObject(value) || typeof value.command !== 'string') {
    throw new SpoutError(ErrorCode.BadFrame, `command frame without a command: ${truncate(body)}`);
  }
  switch (value.command) {
    case 'next':
    case 'activate':
    case 'deactivate':
      return { command: value.command };
    case 'ack':
    case 'fail':
      return { command: value.command, id: value.id };
    default:
      throw new SpoutError(ErrorCode.BadFrame, `unknown command "${value.command}"`);
  }
}

/** Index of this task among its component's tasks, as Storm computes it: position in the sorted task ids. */
export function taskPosition(context: TopologyContext): { index: number; count: number } {
  const ids = Object.entries(context['task->component'])
    .filter(([, component]) => component === context.componentid)
    .map(([id]) => Number(id))
    .sort((a, b) => a - b);
  const index = ids.indexOf(context.taskid);
  if (index < 0) {
    throw new SpoutError(
      ErrorCode.BadFrame,
      `task ${context.taskid} is not a task of component ${context.componentid}`,
    );
  }
  return { index, count: ids.length };
}

export const SYNC_FRAME = '{"command":"sync"}\nend\n';

/** The most frames kept while Storm waits for the pid (it sends the handshake at once: a few warnings at most). */
export const FRAMES_KEPT_BEFORE_PID = 100;

/**
 * Writes frames to Storm. Frames produced while a command is handled are written in one piece when its
 * `sync` goes out; anything said outside a command (a log from a background event) is written at once.
 * Nothing goes out before the handshake's pid: Storm takes the pid from the first frame it reads, so
 * whatever is said before (a warning from a module preloaded with NODE_OPTIONS) waits and follows it.
 */
export class StormOutput {
  private pending = '';
  private inCommand = false;
  /** Frames said before the pid, in order; undefined once the pid went out. */
  private beforePid: string[] | undefined = [];
  private droppedBeforePid = 0;

  /** `write` is told whether the text answers a command (Storm is reading it) or is said unprompted. */
  constructor(private readonly write: (text: string, reply: boolean) => void) {}

  beginCommand(): void {
    this.inCommand = true;
  }

  sync(): void {
    this.pending += SYNC_FRAME;
    this.inCommand = false;
    this.flush(true);
  }

  /** The handshake's reply, written ahead of everything said so far. */
  pid(pid: number): void {
    this.write(`${JSON.stringify({ pid })}\nend\n${this.takeBeforePid()}`, false);
  }

  /**
   * The handshake's reply accepting another wire format (`wire`): only the pid goes out; what was said
   * before it is returned, as JSON frames, for the new format's output to say again.
   */
  pidAccepting(pid: number, wire: string): string {
    const early = this.takeBeforePid();
    this.write(`${JSON.stringify({ pid, wire })}\nend\n`, false);
    return early;
  }

  private takeBeforePid(): string {
    const early = this.beforePid ?? [];
    this.beforePid = undefined;
    if (this.droppedBeforePid > 0)
      early.push(
        `${JSON.stringify({ command: 'log', msg: `${this.droppedBeforePid} more frames said before the handshake were dropped`, level: LogLevel.Warn })}\nend\n`,
      );
    return early.join('');
  }

  /** The hot path: the frame is written as text, without building an object per tuple. */
  emit(id: string | undefined, tuple: unknown[], stream: string): void {
    const streamField = stream === 'default' ? '' : `,"stream":${JSON.stringify(stream)}`;
    // No id: Storm acks the tuple at once and sends no ack or fail for it.
    const idField = id === undefined ? '' : `"id":${JSON.stringify(id)},`;
    this.pending += `{"command":"emit",${idField}"tuple":${JSON.stringify(tuple)}${streamField},"need_task_ids":false}\nend\n`;
    if (!this.inCommand) this.flush(false);
  }

  /** Without an id: Storm tracks no outcome for it (dead letters). */
  emitUnanchored(tuple: unknown[], stream: string): void {
    this.send({ command: 'emit', tuple, stream, need_task_ids: false });
  }

  log(msg: string, level: LogLevel = LogLevel.Info): void {
    this.send({ command: 'log', msg, level });
  }

  /** Reported in the Storm UI; not fatal. */
  error(msg: string): void {
    this.send({ command: 'error', msg });
  }

  /** Updates an `IShellMetric` the component registered as `name` (any other name kills the worker). */
  metrics(name: string, params: unknown): void {
    this.send({ command: 'metrics', name, params });
  }

  private send(frame: unknown): void {
    this.pending += `${JSON.stringify(frame)}\nend\n`;
    if (!this.inCommand) this.flush(false);
  }

  private flush(reply: boolean): void {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    if (this.beforePid) {
      if (this.beforePid.length < FRAMES_KEPT_BEFORE_PID) this.beforePid.push(text);
      else this.droppedBeforePid += 1;
      return;
    }
    this.write(text, reply);
  }
}
