/**
 * What the migration tests (import, KCL import and export) share: running the spout's tool or a shell line as
 * an operator does, the records they put, and the parents-first check on what the spout then emitted.
 */
import { spawn } from 'node:child_process';
import type { PutResult } from './kinesisAdmin';
import { ENTRY_SCRIPT, type Emit } from './stormDriver';
import { SPOUT_NODE } from './spoutNode';

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  stdin?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** A command to its exit (killed after 60 s), with test credentials unless the environment has its own. */
export function runCommand(command: string, args: string[], options: RunOptions = {}): Promise<ToolRun> {
  return new Promise((done, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', ...process.env, ...options.env },
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 60_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}

/** The spout's tool (the bundled script) with these arguments. */
export function runTool(args: string[], options: RunOptions = {}): Promise<ToolRun> {
  return runCommand(SPOUT_NODE, [ENTRY_SCRIPT, ...args], options);
}

/** A shell line as an operator types it (`node` is then the machine's node, as it would be theirs). */
export function runShell(line: string, options: RunOptions = {}): Promise<ToolRun> {
  return runCommand('bash', ['-c', line], options);
}

export const records = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ partitionKey: `${prefix}-key-${i}`, data: `${prefix}-${i}` }));

export const idOf = (r: PutResult) => `${r.shardId}:${r.sequenceNumber}`;

/** Every record of each parent was emitted before the first of its child's. */
export function expectParentsFirst(emits: Emit[], parents: Record<string, string[]>): void {
  const shardOf = (e: Emit) => e.id.split(':')[0];
  for (const [child, ofChild] of Object.entries(parents)) {
    const first = emits.findIndex((e) => shardOf(e) === child);
    if (first < 0) continue;
    for (const parent of ofChild) expect(emits.map(shardOf).lastIndexOf(parent)).toBeLessThan(first);
  }
}
