/** The tools' entry: parses the command line, runs `status`, `reset`, `deregister-consumer`, `import` or `export`, maps outcomes to exit codes. */
import { describeError } from '../errors';
import { isActionable, kinesisProblem } from '../kinesis/errors';
import { parseToolArgs, USAGE } from '../tools/args';
import { ExitCode, ToolError } from '../tools/exitCodes';
import type { ToolIo } from '../tools/io';
import { runDeregisterConsumer } from '../tools/deregisterConsumer';
import { runExport } from '../tools/exportKcl';
import { runImport } from '../tools/import';
import { runReset } from '../tools/reset';
import { runStatus } from '../tools/status';
import { nodeVersionNote, quietSdkNodeWarning } from './nodeVersion';

export const TOOLS = ['status', 'reset', 'deregister-consumer', 'import', 'export'] as const;
export type ToolName = (typeof TOOLS)[number];

export function isTool(arg: string | undefined): arg is ToolName {
  return (TOOLS as readonly string[]).includes(arg ?? '');
}

/**
 * A command line meant for the tools, not the spout: Storm starts the spout with no argument (or a config
 * file), never with a flag; without this, `kinesis-spout --help` would sit waiting for Storm's handshake.
 */
export function isHelpRequest(arg: string | undefined): boolean {
  return arg === 'help' || (arg?.startsWith('-') ?? false);
}

/** Prints the usage: on stdout, exit 0, when asked for; on stderr, exit 2, for an unknown flag. */
export function helpFor(arg: string | undefined, io: Pick<ToolIo, 'out' | 'err'>): number {
  if (arg === 'help' || arg === '--help' || arg === '-h') {
    io.out(USAGE);
    return ExitCode.Ok;
  }
  io.err(`kinesis-spout: unknown option ${arg}; the spout itself takes no option (Storm runs it)\n\n${USAGE}`);
  return ExitCode.Usage;
}

/** The terminal of a real process. */
export function processIo(): ToolIo {
  let lines: AsyncIterator<string> | undefined;
  let interrupted: Promise<void> | undefined;
  return {
    out: (text) => process.stdout.write(text.endsWith('\n') || text.endsWith(': ') ? text : `${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    interactive: process.stdout.isTTY === true && process.stdin.isTTY === true,
    async readLine() {
      // Loaded here: the spout's process never reads a line, and readline brings five modules with it.
      lines ??= (await import('node:readline'))
        .createInterface({ input: process.stdin, terminal: false })
        [Symbol.asyncIterator]();
      const next = await lines.next();
      return next.done ? undefined : next.value;
    },
    interrupted: () =>
      (interrupted ??= new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      })),
    now: () => Date.now(),
  };
}

export async function runTool(tool: ToolName, args: readonly string[], io: ToolIo): Promise<number> {
  try {
    const command = parseToolArgs(tool, args);
    switch (command.tool) {
      case 'help':
        io.out(USAGE);
        return ExitCode.Ok;
      case 'status':
        return await runStatus(command, io);
      case 'reset':
        return await runReset(command, io);
      case 'deregister-consumer':
        return await runDeregisterConsumer(command, io);
      case 'import':
        return await runImport(command, io);
      case 'export':
        return await runExport(command, io);
    }
  } catch (err) {
    if (err instanceof ToolError) {
      const fromArgs = err.message.startsWith(`${tool}: `);
      io.err(`kinesis-spout ${fromArgs ? err.message : `${tool}: ${err.message}`}`);
      if (err.exitCode === ExitCode.Usage && fromArgs) io.err(`\n${USAGE}`);
      return err.exitCode;
    }
    // The spout's own hint for what Kinesis or the SDK said (e.g. no credentials), not the bare message.
    const problem = kinesisProblem(err, 'the stream');
    const fix = isActionable(err, problem) ? `; ${problem.fix}` : '';
    io.err(`kinesis-spout ${tool} failed: ${describeError(err)}${fix}`);
    return ExitCode.Failed;
  }
}

export function runHelpProcess(arg: string | undefined): void {
  const code = helpFor(arg, processIo());
  process.stdout.write('', () => process.exit(code));
}

/** Runs a tool in this process and exits with its code (open sockets must not keep it alive). */
export function runToolProcess(tool: ToolName, args: readonly string[]): void {
  quietSdkNodeWarning();
  const node = nodeVersionNote(process.version);
  if (node.unsupported) process.stderr.write(`kinesis-spout: ${node.message}\n`);
  void runTool(tool, args, processIo()).then((code) => {
    process.stdout.write('', () => process.exit(code));
  });
}
