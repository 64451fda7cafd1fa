/** One error vocabulary: every error the spout raises has a code, says whether retrying can help, and keeps its cause. */
export const ErrorCode = {
  BadConfig: 'BAD_CONFIG',
  BadFrame: 'BAD_FRAME',
  StreamMismatch: 'STREAM_MISMATCH',
  ZooKeeper: 'ZOOKEEPER',
  /** A ZooKeeper node holds what this version cannot read (written by hand, or by another program). */
  CorruptState: 'CORRUPT_STATE',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class SpoutError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;

  constructor(code: ErrorCode, message: string, options: { retriable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SpoutError';
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}

/** A short, single-line description of any thrown value, for logs. */
export function describeError(err: unknown): string {
  // Our own errors already say what happened in the user's words: no internal name or code in front.
  if (err instanceof SpoutError) return err.message.replace(/\s+/g, ' ');
  if (err instanceof Error) {
    const name = (err as { name?: string }).name ?? 'Error';
    const code = (err as { code?: unknown }).code;
    const prefix = typeof code === 'string' || typeof code === 'number' ? `${name}[${code}]` : name;
    return `${prefix}: ${err.message}`.replace(/\s+/g, ' ');
  }
  return String(err).replace(/\s+/g, ' ');
}
