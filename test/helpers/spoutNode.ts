/**
 * The Node.js that runs the spout and its tools in the tests: `SPOUT_NODE` (a path to a node binary, e.g.
 * from `bash scripts/nodes.sh 22`), or else the one running jest. Jest, the emulators and the in-process
 * tests stay on the Node that runs jest; only the processes a user's machine would run change.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, resolve } from 'node:path';

function chosen(): string {
  const value = process.env.SPOUT_NODE;
  if (!value) return process.execPath;
  const path = isAbsolute(value) ? value : resolve(value);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `SPOUT_NODE=${value} is not an executable file: give the path of a node binary (bash scripts/nodes.sh 22 prints one)`,
    );
  }
  return path;
}

export const SPOUT_NODE = chosen();

let version: string | undefined;

/** `process.version` of SPOUT_NODE, e.g. `v22.23.5`. */
export function spoutNodeVersion(): string {
  version ??= execFileSync(SPOUT_NODE, ['--version'], { encoding: 'utf8' }).trim();
  return version;
}

/** A PATH on which `node` is SPOUT_NODE: for processes (Storm's ShellSpout) that start `node` by name. */
export function pathWithSpoutNode(path = process.env.PATH ?? ''): string {
  if (basename(SPOUT_NODE) !== 'node') {
    throw new Error(
      `SPOUT_NODE=${SPOUT_NODE}: Storm starts \`node\` by name, so the binary must be called node (a folder of its own on the PATH)`,
    );
  }
  return [dirname(SPOUT_NODE), ...path.split(delimiter).filter(Boolean)].join(delimiter);
}

/**
 * How KinesisShellSpout starts the spout process: its `NODE_OPTIONS` (before the script) and `ENVIRONMENT`
 * (unless the worker's environment has the variable), read from its Java source, the one place they are
 * written, so that tests and benchmarks that start the process themselves start it the same way.
 */
export const SHELL_SPOUT_LAUNCH = readShellSpoutLaunch();

function readShellSpoutLaunch(): { nodeOptions: string[]; env: Record<string, string> } {
  const file = resolve(__dirname, '../../storm/src/main/java/io/github/kinesisshellspout/KinesisShellSpout.java');
  const source = readFileSync(file, 'utf8');
  const literals = (constant: string) => {
    const call = new RegExp(`\\b${constant} = (?:List|Map)\\.of\\(([^)]*)\\)`).exec(source);
    if (!call) throw new Error(`${file}: no ${constant} = List.of(...) or Map.of(...)`);
    return [...call[1].matchAll(/"([^"]*)"/g)].map((m) => m[1]);
  };
  const pairs = literals('ENVIRONMENT');
  const env: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) env[pairs[i]] = pairs[i + 1];
  return { nodeOptions: literals('NODE_OPTIONS'), env };
}

/**
 * The variables KinesisShellSpout adds to a spout process's environment: its `ENVIRONMENT`, but those the
 * environment (the worker's) already has.
 */
export function shellSpoutEnv(environment: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(Object.entries(SHELL_SPOUT_LAUNCH.env).filter(([name]) => environment[name] === undefined));
}
