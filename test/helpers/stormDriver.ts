/**
 * Drives the built entry script exactly as Storm's ShellSpout does: handshake with pidDir/conf/context,
 * then one command at a time, each answered by a sync. Collects emits, logs and errors.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FrameDecoder } from '../../src/multilang/frames';
import { SHELL_SPOUT_LAUNCH, SPOUT_NODE, shellSpoutEnv } from './spoutNode';

export const ENTRY_SCRIPT = resolve(__dirname, '../../multilang/resources/kinesis-spout.cjs');
export const DEFAULT_FIELDS = ['partitionKey', 'data', 'shardId', 'sequenceNumber', 'arrivalTimestamp'];

export interface Emit {
  id: string;
  tuple: unknown[];
  stream?: string;
  frame: Record<string, unknown>;
  /** How many log frames the process had sent before this emit (its own order). */
  logsBefore: number;
  /** performance.now() when the frame arrived: when the process emitted it, give or take a pipe. */
  receivedAt: number;
}

export interface DriverOptions {
  conf: Record<string, unknown>;
  taskId?: number;
  /** All task ids of the spout component (Storm gives each task its own process). */
  componentTasks?: number[];
  outputFields?: string[] | null;
  /** Further streams the topology declares for the spout (name -> fields), beside `default`. */
  streams?: Record<string, string[]>;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** The script to run; default the built spout. */
  script?: string;
  /**
   * Node options before the script; default KinesisShellSpout's (SHELL_SPOUT_LAUNCH), so that tests run the
   * spout as production does. Given, they replace those (spread SHELL_SPOUT_LAUNCH.nodeOptions to add to them).
   */
  nodeOptions?: string[];
  /** Keep every emit and frame (default); benchmarks turn it off to measure, not hoard. */
  keepHistory?: boolean;
  /**
   * How stdin and stdout are connected: `pipes` (default) as Storm's ProcessBuilder does, or Node's own
   * `socketpair`s (which is what `spawn` gives, and what the spout must also cope with).
   */
  stdio?: 'pipes' | 'socketpair';
  /** The handshake's pidDir; default a fresh temporary directory. */
  pidDir?: string;
  /** How long to wait for the pid (Storm waits forever); past it, `pid` is -1. Default: no limit. */
  pidTimeoutMs?: number;
}

/** An OS pipe, made from a FIFO (Node has no pipe(2)): both ends open, the FIFO's name already gone. */
export function osPipe(): { read: number; write: number } {
  const dir = mkdtempSync(join(tmpdir(), 'spout-pipe-'));
  const path = join(dir, 'fifo');
  execFileSync('mkfifo', [path]);
  // Opening the read end first, without blocking, lets the write end open at once.
  const read = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const write = openSync(path, constants.O_WRONLY);
  rmSync(dir, { recursive: true });
  return { read, write };
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export class StormDriver {
  readonly emits: Emit[] = [];
  readonly logs: { msg: string; level: number; at: number }[] = [];
  readonly errors: string[] = [];
  /** `metrics` frames, as ShellSpout hands them to the registered IShellMetric. */
  readonly metrics: { name: string; params: unknown; commandCount: number }[] = [];
  /** Every frame received, in order (for protocol assertions). */
  readonly frames: Record<string, unknown>[] = [];
  readonly stderr: string[] = [];
  pid = 0;
  private readonly child: ChildProcess;
  private readonly input: Writable;
  private waiting: { resolve: (emits: Emit[]) => void; emits: Emit[] } | undefined;
  private pidWaiter: ((pid: number) => void) | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private readonly keepHistory: boolean;
  /** Emits seen, kept or not. */
  emitCount = 0;
  /** Commands sent (the handshake not counted): each must be answered by exactly one sync. */
  commandCount = 0;

  private constructor(options: DriverOptions) {
    this.keepHistory = options.keepHistory ?? true;
    const pipes = (options.stdio ?? 'pipes') === 'pipes' ? { stdin: osPipe(), stdout: osPipe() } : undefined;
    this.child = spawn(
      SPOUT_NODE,
      [
        ...(options.nodeOptions ?? SHELL_SPOUT_LAUNCH.nodeOptions),
        options.script ?? ENTRY_SCRIPT,
        ...(options.args ?? []),
      ],
      {
        stdio: pipes ? [pipes.stdin.read, pipes.stdout.write, 'pipe'] : ['pipe', 'pipe', 'pipe'],
        env: {
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          ...process.env,
          ...shellSpoutEnv(),
          ...options.env,
        },
      },
    );
    live.add(this.child);
    let output: Readable;
    if (pipes) {
      // The child's ends are the child's alone: kept open here, neither side would ever see end of file.
      closeSync(pipes.stdin.read);
      closeSync(pipes.stdout.write);
      this.input = new Socket({ fd: pipes.stdin.write, readable: false, writable: true });
      output = new Socket({ fd: pipes.stdout.read, readable: true, writable: false });
    } else {
      this.input = this.child.stdin!;
      output = this.child.stdout!;
    }
    this.exited = new Promise((done) =>
      this.child.on('exit', (code, signal) => {
        live.delete(this.child);
        this.input.destroy();
        this.waiting?.resolve(this.waiting.emits);
        done({ code, signal });
      }),
    );
    // Writing to a process that just died fails with EPIPE; its exit resolves the pending command.
    this.input.on('error', () => undefined);
    const decoder = new FrameDecoder();
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => {
      for (const body of decoder.push(chunk)) this.onFrame(body);
    });
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => this.stderr.push(chunk));
  }

  static async start(options: DriverOptions): Promise<StormDriver> {
    const driver = new StormDriver(options);
    const taskId = options.taskId ?? 1;
    const tasks = options.componentTasks ?? [taskId];
    const taskToComponent: Record<string, string> = { '99': '__acker' };
    for (const t of tasks) taskToComponent[String(t)] = 'kinesis';
    const context: Record<string, unknown> = {
      taskid: taskId,
      componentid: 'kinesis',
      'task->component': taskToComponent,
    };
    if (options.outputFields !== null)
      context['stream->outputfields'] = { default: options.outputFields ?? DEFAULT_FIELDS, ...options.streams };
    const pidDir = options.pidDir ?? mkdtempSync(join(tmpdir(), 'spout-pid-'));
    const pid = new Promise<number>((done) => (driver.pidWaiter = done));
    driver.write({ pidDir, conf: { 'topology.name': 'test-topology', ...options.conf }, context });
    let timer: NodeJS.Timeout | undefined;
    const noPid = new Promise<number>((done) => {
      if (options.pidTimeoutMs !== undefined) timer = setTimeout(() => done(-1), options.pidTimeoutMs);
    });
    driver.pid = await Promise.race([pid, driver.exited.then(() => -1), noPid]);
    clearTimeout(timer);
    return driver;
  }

  private onFrame(body: string): void {
    const frame = JSON.parse(body) as Record<string, unknown>;
    if (this.keepHistory) this.frames.push(frame);
    if (typeof frame.pid === 'number') {
      this.pidWaiter?.(frame.pid);
      return;
    }
    switch (frame.command) {
      case 'emit': {
        const emit: Emit = {
          id: frame.id as string,
          tuple: frame.tuple as unknown[],
          stream: frame.stream as string | undefined,
          frame,
          logsBefore: this.logs.length,
          receivedAt: performance.now(),
        };
        // As ShellSpout does: an emit that does not say need_task_ids:false is answered with its task ids.
        if (frame.need_task_ids !== false) this.write([2]);
        this.emitCount += 1;
        if (this.keepHistory) this.emits.push(emit);
        this.waiting?.emits.push(emit);
        break;
      }
      case 'log':
        this.logs.push({ msg: frame.msg as string, level: frame.level as number, at: Date.now() });
        break;
      case 'error':
        this.errors.push(frame.msg as string);
        break;
      case 'metrics':
        this.metrics.push({ name: frame.name as string, params: frame.params, commandCount: this.commandCount });
        break;
      case 'sync': {
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting?.resolve(waiting.emits);
        break;
      }
      default:
        throw new Error(`unexpected frame from the spout: ${body}`);
    }
  }

  private write(value: unknown): void {
    this.input.write(`${JSON.stringify(value)}\nend\n`);
  }

  /** Sends one command and resolves with what it emitted, once its sync arrives. */
  command(value: Record<string, unknown>): Promise<Emit[]> {
    const run = () =>
      new Promise<Emit[]>((done) => {
        if (this.child.exitCode !== null || this.child.signalCode !== null) return done([]);
        this.waiting = { resolve: done, emits: [] };
        this.commandCount += 1;
        this.write(value);
      });
    const result = this.queue.then(run, run);
    this.queue = result;
    return result;
  }

  next(): Promise<Emit[]> {
    return this.command({ command: 'next' });
  }

  ack(id: string): Promise<Emit[]> {
    return this.command({ command: 'ack', id });
  }

  fail(id: string): Promise<Emit[]> {
    return this.command({ command: 'fail', id });
  }

  activate(): Promise<Emit[]> {
    return this.command({ command: 'activate' });
  }

  deactivate(): Promise<Emit[]> {
    return this.command({ command: 'deactivate' });
  }

  /**
   * Calls next in a loop as Storm does (a short pause when nothing came), handing each emit to `onEmit`
   * (default: ack it), until `done()` or the timeout. Returns false on timeout. While `paused()` (the task's
   * topology deactivated), no `next` is sent, as Storm sends none then.
   */
  async pump(
    done: () => boolean,
    options: {
      timeoutMs?: number;
      onEmit?: (emit: Emit) => Promise<unknown> | undefined;
      paused?: () => boolean;
    } = {},
  ): Promise<boolean> {
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    const onEmit = options.onEmit ?? ((emit: Emit) => this.ack(emit.id));
    while (!done()) {
      if (Date.now() > deadline || this.child.exitCode !== null) return false;
      if (options.paused?.()) {
        await new Promise((r) => setTimeout(r, 10));
        continue;
      }
      const emits = await this.next();
      for (const emit of emits) await onEmit(emit);
      if (emits.length === 0) await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  closeStdin(): void {
    this.input.end();
  }

  /**
   * Stops the process as ShellSpout.close() does (Java's Process.destroy(): SIGTERM, then its pipes
   * closed), SIGKILL after `graceMs`.
   */
  async stop(graceMs = 8_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    this.closeStdin();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** The counters of each of the process's `stats:` log lines, oldest first. */
  stats(): Record<string, number>[] {
    return this.logs.filter((l) => l.msg.startsWith('stats: ')).map((l) => statsCounters(l.msg));
  }

  /** The counters of the process's last `stats:` log line. */
  lastStats(): Record<string, number> | undefined {
    for (let i = this.logs.length - 1; i >= 0; i--)
      if (this.logs[i].msg.startsWith('stats: ')) return statsCounters(this.logs[i].msg);
    return undefined;
  }

  logText(): string {
    return (
      this.logs.map((l) => `${new Date(l.at).toISOString().slice(11, 23)} [${l.level}] ${l.msg}`).join('\n') +
      (this.stderr.length ? `\nstderr: ${this.stderr.join('')}` : '')
    );
  }
}

/** `stats: a=1 b=2` as `{ a: 1, b: 2 }`. */
export function statsCounters(line: string): Record<string, number> {
  return Object.fromEntries(
    line
      .slice(7)
      .split(' ')
      .map((kv) => kv.split('='))
      .map(([k, v]) => [k, Number(v)]),
  );
}
