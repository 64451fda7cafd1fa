/**
 * Where the spout's words go: Storm's log, and Storm's `error` (the UI) for whatever keeps it from
 * reading. Both rate-limited per cause, so a problem that lasts is repeated now and then, never flooded.
 * The bottom layer: every other one logs through these levels and this logger.
 */
import type { Scheduler } from './scheduler';

/** Storm's multilang `log` levels. */
export const LogLevel = { Trace: 0, Debug: 1, Info: 2, Warn: 3, Error: 4 } as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

export interface Logger {
  log(level: LogLevel, message: string): void;
  error(message: string): void;
}

const WARN_EVERY_MS = 10_000;
const ERROR_EVERY_MS = 60_000;

export class Reporter {
  private readonly lastAt = new Map<string, number>();

  constructor(
    private readonly logger: Logger,
    private readonly scheduler: Scheduler,
  ) {}

  log(level: LogLevel, message: string): void {
    this.logger.log(level, message);
  }

  /** A warning, at most once per `everyMs` for `key`. */
  warn(key: string, message: string, everyMs = WARN_EVERY_MS): void {
    if (this.due(`warn:${key}`, everyMs)) this.logger.log(LogLevel.Warn, message);
  }

  /** A problem the operator must see: Storm `error` (shown in the UI, not fatal) and the log, at most once per `everyMs` for `key`. */
  problem(key: string, message: string, everyMs = ERROR_EVERY_MS): void {
    if (this.due(`problem:${key}`, everyMs)) this.error(message);
  }

  /** An event that happens once and must be seen each time (a record given up): never rate-limited, keeps no key. */
  error(message: string): void {
    this.logger.error(message);
    this.logger.log(LogLevel.Error, message);
  }

  private due(key: string, everyMs: number): boolean {
    const now = this.scheduler.now();
    const last = this.lastAt.get(key);
    if (last !== undefined && now - last < everyMs) return false;
    this.lastAt.set(key, now);
    return true;
  }
}
