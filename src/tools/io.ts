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
