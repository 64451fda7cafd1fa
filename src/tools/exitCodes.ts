/** What the tools' exit codes mean (documented in docs/operations.md and `--help`), and the error that carries one. */
export const ExitCode = {
  /** Done: status printed, reset written (or nothing to change). */
  Ok: 0,
  /** ZooKeeper or Kinesis failed, or the state cannot be read. */
  Failed: 1,
  /** A bad argument or configuration. */
  Usage: 2,
  /** No such application (no bootstrap node) under the configured root. */
  NoApplication: 3,
  /** reset: a lease is held (a spout is running), and no `--force`. */
  LeasesHeld: 4,
  /** reset: the question was not answered `yes`; nothing written. */
  NotConfirmed: 5,
  /** reset: the state changed between the plan and the write; nothing written. */
  Conflict: 6,
  /** status: printed, and it names a problem (a `PROBLEM` line; `"problem"` in `--json`). */
  Problem: 7,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An outcome that ends a tool with a message and an exit code (not a crash: no stack trace shown). */
export class ToolError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

export const usageError = (message: string): ToolError => new ToolError(ExitCode.Usage, message);
