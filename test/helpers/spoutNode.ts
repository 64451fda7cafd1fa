/**
 * The Node.js that runs the spout and its tools in the tests: `SPOUT_NODE` (a path to a node binary, e.g.
 * from `bash scripts/nodes.sh 22`), or else the one running jest. Jest, the emulators and the in-process
 * tests stay on the Node that runs jest; only the processes a user's machine would run change.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
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
