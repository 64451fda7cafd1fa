/**
 * Which Node.js runs this process, said at every start of the spout (and by the tools only when it is
 * below the supported range), and the SDK's own Node-version warning kept off the tools' stderr. Pure but
 * for `quietSdkNodeWarning`.
 */
import { LogLevel } from '../core/log';

/** The oldest major the spout supports: package.json's `engines` (a unit test holds them equal). */
export const OLDEST_SUPPORTED_NODE = 20;

/**
 * Supported majors past their end of life: they still run the spout, whose bundled AWS SDK supports them,
 * and every start says so with what to do.
 */
const END_OF_LIFE: Readonly<Record<number, string>> = {
  20: 'reached its end of life in April 2026, and the AWS SDK releases after the first week of January 2027 require Node 22',
};

export interface VersionNote {
  level: LogLevel;
  message: string;
  /** Below OLDEST_SUPPORTED_NODE (or unreadable). */
  unsupported: boolean;
}

/** `version` as `process.version` gives it (`v22.23.5`). */
export function nodeVersionNote(version: string): VersionNote {
  const major = Number(/^v(\d+)\./.exec(version)?.[1]);
  if (!Number.isInteger(major) || major < OLDEST_SUPPORTED_NODE) {
    return {
      level: LogLevel.Warn,
      unsupported: true,
      message: `WARNING: running on Node.js ${version}, below the supported range (Node ${OLDEST_SUPPORTED_NODE} and newer): the spout may fail in ways it cannot report. Run the workers on Node 22 or 24`,
    };
  }
  const endOfLife = END_OF_LIFE[major];
  if (endOfLife) {
    return {
      level: LogLevel.Warn,
      unsupported: false,
      message: `running on Node.js ${version}: Node ${major} ${endOfLife}. It still runs this spout; move the workers to Node 22 or 24`,
    };
  }
  return { level: LogLevel.Info, unsupported: false, message: `running on Node.js ${version}` };
}

/**
 * The AWS SDK warns on stderr, once per process, when Node is older than its next releases will need
 * (`NodeVersionSupportWarning`): for a tool run by hand that is noise at every `status`, about the SDK
 * rather than this tool. Its own switch turns it off, unless the operator set that switch themselves.
 * (The spout sends every Node warning to Storm's log instead, at debug: see run.ts.)
 */
export function quietSdkNodeWarning(env: NodeJS.ProcessEnv = process.env): void {
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}
