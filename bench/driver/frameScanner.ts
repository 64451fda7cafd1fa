/**
 * The driver's reading of a responder's output: frames split on Storm's `\nend\n`, and of each only what
 * the driver acts on (the sync, the pid, an emit's id, whether it wants task ids back, an error's text).
 * Text comes in as latin1 (one byte, one character): ids and commands are ASCII.
 */
const SEPARATOR = '\nend\n';
const EMIT = '{"command":"emit"';
const EMIT_ID_FIRST = '{"command":"emit","id":';

export interface ScanOutcome {
  synced: boolean;
  pid: number | undefined;
  /** Emits that did not say `need_task_ids: false`: ShellSpout answers each with its task ids. */
  taskIdReplies: number;
}

export class FrameScanner {
  private rest = '';
  lastError: string | undefined;
  /** The spout's latest `stats:` log line (its own counters), if it sent one. */
  lastStats: string | undefined;

  /** Feeds text; emit ids (their raw JSON) are appended to `ids`. */
  push(text: string, ids: string[] | undefined): ScanOutcome {
    const outcome: ScanOutcome = { synced: false, pid: undefined, taskIdReplies: 0 };
    let all = this.rest === '' ? text : this.rest + text;
    let start = 0;
    for (let end = all.indexOf(SEPARATOR); end !== -1; end = all.indexOf(SEPARATOR, start)) {
      const frame = all.slice(start, end);
      start = end + SEPARATOR.length;
      if (frame === '{"command":"sync"}') {
        if (outcome.synced) throw new Error('two syncs for one command');
        outcome.synced = true;
      } else if (frame.startsWith(EMIT)) {
        if (outcome.synced) throw new Error(`an emit after the sync: ${frame.slice(0, 200)}`);
        if (!ids) throw new Error(`an emit in reply to an ack: ${frame.slice(0, 200)}`);
        ids.push(emitId(frame));
        if (!frame.includes('"need_task_ids":false')) outcome.taskIdReplies += 1;
      } else if (frame.startsWith('{"pid":')) {
        outcome.pid = Number(frame.slice(7, -1));
      } else if (frame.startsWith('{"command":"error"')) {
        this.lastError = (JSON.parse(frame) as { msg: string }).msg;
      } else if (frame.startsWith('{"command":"log","msg":"stats: ')) {
        this.lastStats = (JSON.parse(frame) as { msg: string }).msg;
      }
      // Other logs and metrics are read and let go, as ShellSpout does with them.
    }
    this.rest = start === all.length ? '' : all.slice(start);
    all = '';
    return outcome;
  }
}

/** The raw JSON of an emit's id: first in the spout's frames, after the tuple in storm.js's. */
export function emitId(frame: string): string {
  let at: number;
  if (frame.startsWith(EMIT_ID_FIRST)) at = EMIT_ID_FIRST.length;
  else {
    // After the tuple: the last `"id":` is the key, whatever the tuple's text holds.
    const key = frame.lastIndexOf('"id":');
    if (key < 0) throw new Error(`an emit without an id: ${frame.slice(0, 200)}`);
    at = key + 5;
  }
  if (frame.charCodeAt(at) === 34 /* " */) return frame.slice(at, frame.indexOf('"', at + 1) + 1);
  const stop = frame.slice(at).search(/[,}]/);
  return frame.slice(at, at + stop);
}
