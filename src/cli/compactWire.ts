/**
 * Choosing the wire format at the handshake: the compact one when the Java side offers it (its
 * CompactSerializer puts `kinesis.spout.wire` in the conf it sends), else Storm's JSON.
 */
import { isObject } from '../core/json';
import type { LogLevel } from '../core/log';
import type { SpoutCommand } from '../multilang/protocol';
import { COMPACT_WIRE, FrameCutter, WIRE_CONF_KEY } from '../multilang/compact';
import { parseCompactCommand, type SpoutOutput } from '../multilang/compactProtocol';
import { FrameDecoder } from '../multilang/frames';
import { NulUnescaper } from '../multilang/nulEscape';

/** The format to answer in: COMPACT_WIRE when the handshake offers it, else undefined (JSON). Never throws. */
export function offeredWire(handshakeBody: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(handshakeBody);
  } catch {
    return undefined;
  }
  if (!isObject(value) || !isObject(value.conf)) return undefined;
  const offer = value.conf[WIRE_CONF_KEY];
  return Array.isArray(offer) && offer.includes(COMPACT_WIRE) ? COMPACT_WIRE : undefined;
}

/** Says again, in `out`'s format, the JSON frames (logs, errors, metrics) said before the handshake's pid. */
export function replayJsonFrames(text: string, out: SpoutOutput): void {
  for (const body of new FrameDecoder().push(text)) {
    const frame = JSON.parse(body) as Record<string, unknown>;
    switch (frame.command) {
      case 'log':
        out.log(String(frame.msg), frame.level as LogLevel);
        break;
      case 'error':
        out.error(String(frame.msg));
        break;
      case 'metrics':
        out.metrics(String(frame.name), frame.params);
        break;
    }
  }
}

export interface CompactHandlers {
  /** A command with the acks its frame carried (the command undefined for acks alone): answer with one sync. */
  command(acks: unknown[], command: SpoutCommand | undefined): void;
  /** A frame that does not parse (its bounds are known: Storm still waits for one sync). */
  badFrame(err: unknown): void;
  /** The stream cannot be cut into frames any more. */
  broken(err: unknown): void;
}

/** What reads Storm's bytes in the compact format, in any pieces, wake-up NULs anywhere among them. */
export function compactInput(handlers: CompactHandlers): (chunk: Buffer) => void {
  const unescaper = new NulUnescaper();
  const cutter = new FrameCutter();
  let broken = false;
  return (chunk) => {
    if (broken) return;
    try {
      cutter.push(unescaper.push(chunk), (frame) => {
        let parsed: ReturnType<typeof parseCompactCommand>;
        try {
          parsed = parseCompactCommand(frame);
        } catch (err) {
          handlers.badFrame(err);
          return;
        }
        const { acks, command } = parsed;
        // Not a command (the reply to an emit that asked for task ids, which this spout never does): no sync.
        if (command.command === 'taskIds') return;
        handlers.command(acks, command.command === 'acks' ? undefined : command);
      });
    } catch (err) {
      broken = true;
      handlers.broken(err);
    }
  };
}
