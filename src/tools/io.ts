import { ExitCode, ToolError } from './exitCodes';

/** What the tools need of the terminal, injected so that they can be driven without one. */
export interface ToolIo {
  out(text: string): void;
  err(text: string): void;
  /** True when a person types and reads (stdin and stdout are a terminal): redraws clear the screen, answers echo. */
  readonly interactive: boolean;
  /** The next line typed on stdin; undefined at end of input. */
  readLine(): Promise<string | undefined>;
  /** Resolves at Ctrl-C (SIGINT) or SIGTERM; until first asked, those end the process as usual. */
  interrupted(): Promise<void>;
  now(): number;
}

/**
 * Asks `question` before a tool writes, unless `yes`: undefined to go on, else the exit code (and
 * `nothing`, what was not done, said). Piped input may answer, unless `terminalOnly`: then without a terminal
 * nobody is asked and the tool is refused.
 */
export async function confirm(
  io: ToolIo,
  ask: { yes?: boolean; question: string; nothing: string; terminalOnly?: boolean },
): Promise<ExitCode | undefined> {
  if (ask.yes) return undefined;
  if (ask.terminalOnly && !io.interactive)
    throw new ToolError(ExitCode.NotConfirmed, `not a terminal, so nobody to ask: pass --yes to write; ${ask.nothing}`);
  io.out(`${ask.question} Type yes to go on: `);
  const answer = (await io.readLine())?.trim();
  // A terminal echoed the answer and its newline; piped input did not.
  if (!io.interactive) io.out('\n');
  if (answer === 'yes') return undefined;
  io.out(`not confirmed: ${ask.nothing}`);
  return ExitCode.NotConfirmed;
}
