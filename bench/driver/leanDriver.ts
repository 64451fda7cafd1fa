/**
 * The lean driver: drives one responder process as Storm's ShellSpout does (handshake, then one command at
 * a time, each read back up to its `sync`; `next`, then an `ack` round trip per emitted tuple), with as
 * little of its own cost as it can: OS pipes read and written with blocking syscalls, no event loop, frames
 * looked at only as far as the id of an emit. Run as its own process (bundled, plain `node`), one responder
 * per run; prints one JSON line (a `DriverResult`) on stdout.
 *
 * Usage: node lean-driver.js '<DriverSpec as JSON>'
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DriverResult, DriverSpec } from './spec';
import { FrameScanner } from './frameScanner';
import { splitPhases } from './phases';

/** One OS pipe from a FIFO, both ends blocking (the FIFO's name gone once open). */
function osPipe(): { read: number; write: number } {
  const dir = mkdtempSync(join(tmpdir(), 'lean-pipe-'));
  const path = join(dir, 'fifo');
  execFileSync('mkfifo', [path]);
  // Open the read end without blocking so the write end opens at once, then reopen it blocking.
  const nonBlocking = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const write = openSync(path, constants.O_WRONLY);
  const read = openSync(`/proc/self/fd/${nonBlocking}`, constants.O_RDONLY);
  closeSync(nonBlocking);
  rmSync(dir, { recursive: true });
  return { read, write };
}

const CLOCK_TICKS = 100; // USER_HZ

/** User and system CPU time of a process (all its threads), in microseconds. */
function cpuMicrosOf(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: (Number(fields[11]) / CLOCK_TICKS) * 1e6, system: (Number(fields[12]) / CLOCK_TICKS) * 1e6 };
}

function memoryMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) =>
    Number(/\s(\d+)/.exec(status.split('\n').find((l) => l.startsWith(key)) ?? '')?.[1] ?? 0);
  return { rss: Math.round(kib('VmRSS:') / 1024), peak: Math.round(kib('VmHWM:') / 1024) };
}

const sleepMs = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function run(spec: DriverSpec): DriverResult {
  const toChild = osPipe();
  const fromChild = osPipe();
  const child = spawn(process.execPath, [...(spec.nodeOptions ?? []), spec.script], {
    stdio: [toChild.read, fromChild.write, 'ignore'],
    env: { ...process.env, ...spec.env },
    detached: false,
  });
  closeSync(toChild.read);
  closeSync(fromChild.write);
  const pid = child.pid!;
  process.stderr.write(`responder pid ${pid}\n`);
  const input = toChild.write;
  const output = fromChild.read;
  const scanner = new FrameScanner();
  const buffer = Buffer.allocUnsafe(256 * 1024);
  const send = (text: string) => writeSync(input, text);

  /** Reads up to the sync (or the pid), the raw JSON of each emit's id put in `ids`. */
  const readReply = (ids: string[] | undefined, until: 'sync' | 'pid') => {
    for (;;) {
      const read = readSync(output, buffer, 0, buffer.length, null);
      if (read === 0)
        throw new Error(
          `the responder closed its stdout${scanner.lastError ? ` (last error: ${scanner.lastError})` : ''}`,
        );
      const outcome = scanner.push(buffer.toString('latin1', 0, read), ids);
      if (outcome.taskIdReplies > 0) send('[2]\nend\n'.repeat(outcome.taskIdReplies));
      if (until === 'sync' ? outcome.synced : outcome.pid !== undefined) return;
    }
  };

  const pidDir = mkdtempSync(join(tmpdir(), 'lean-pid-'));
  const context = {
    taskid: 1,
    componentid: 'kinesis',
    'task->component': { '1': 'kinesis', '99': '__acker' },
    'stream->outputfields': { default: ['partitionKey', 'data', 'shardId', 'sequenceNumber', 'arrivalTimestamp'] },
  };
  send(`${JSON.stringify({ pidDir, conf: { 'topology.name': 'bench', ...spec.conf }, context })}\nend\n`);
  readReply(undefined, 'pid');

  const ids: string[] = [];
  let acked = 0;
  let commands = 0;
  /** One `next` and an ack round trip per tuple it emitted; false when it emitted nothing. */
  const cycle = (): boolean => {
    ids.length = 0;
    // Byte for byte what ShellSpout writes (json-simple puts `id` first).
    send('{"id":"","command":"next"}\nend\n');
    readReply(ids, 'sync');
    commands += 1;
    for (const id of ids) {
      send(`{"id":${id},"command":"ack"}\nend\n`);
      readReply(undefined, 'sync');
    }
    commands += ids.length;
    acked += ids.length;
    return ids.length > 0;
  };

  const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);
  // Paced: tuples acked since the first emit stay within the rate (Storm's wait strategy while it holds back).
  const pacedFrom = { at: 0, acked: 0 };
  const behind = () =>
    spec.tuplesPerSecond === undefined ||
    acked - pacedFrom.acked < ((performance.now() - pacedFrom.at) / 1000) * spec.tuplesPerSecond;
  const startDeadline = performance.now() + spec.startTimeoutMs;
  while (!cycle()) {
    if (performance.now() > startDeadline)
      throw new Error(
        `no tuple within ${spec.startTimeoutMs} ms${scanner.lastError ? ` (last error: ${scanner.lastError})` : ''}`,
      );
    // What Storm's default wait strategy does when nextTuple emits nothing.
    sleepMs(1);
  }
  pacedFrom.at = performance.now();
  pacedFrom.acked = acked;
  const warmUntil = performance.now() + spec.warmupSeconds * 1000;
  while (performance.now() < warmUntil) if (!behind() || !cycle()) sleepMs(1);

  const windows: number[] = [];
  const t0 = performance.now();
  const monotonic0 = monotonicMicros();
  const acked0 = acked;
  const commands0 = commands;
  const cpu0 = cpuMicrosOf(pid);
  const own0 = process.cpuUsage();
  const end = t0 + spec.seconds * 1000;
  let windowStart = t0;
  let windowAcked = acked;
  let emptyNexts = 0;
  for (let now = t0; now < end; now = performance.now()) {
    if (!behind()) sleepMs(1);
    else if (!cycle()) {
      emptyNexts += 1;
      sleepMs(1);
    }
    if (now - windowStart >= spec.windowMs) {
      const t = performance.now();
      windows.push(((acked - windowAcked) * 1000) / (t - windowStart));
      windowStart = t;
      windowAcked = acked;
    }
  }
  const elapsed = (performance.now() - t0) / 1000;
  const monotonic1 = monotonicMicros();
  const own = process.cpuUsage(own0);
  const cpu1 = cpuMicrosOf(pid);
  const user = cpu1.user - cpu0.user;
  const cpu = user + cpu1.system - cpu0.system;
  const memory = memoryMiB(pid);
  const tuples = acked - acked0;
  closeSync(input);
  closeSync(output);
  child.kill('SIGTERM');
  // Not before: the process sends its pid, then writes the pid file (an rm in between fails with ENOTEMPTY).
  rmSync(pidDir, { recursive: true, force: true });
  const phases = splitPhases(windows);
  return {
    responderPid: pid,
    tuples,
    commands: commands - commands0,
    seconds: elapsed,
    tuplesPerSecond: tuples / elapsed,
    responderCpuMicrosPerTuple: cpu / tuples,
    responderUserMicrosPerTuple: user / tuples,
    driverCpuMicrosPerTuple: (own.user + own.system) / tuples,
    rssMiB: memory.rss,
    peakRssMiB: memory.peak,
    emptyNexts,
    windowMs: spec.windowMs,
    ...(scanner.lastStats ? { responderStats: scanner.lastStats } : {}),
    fast: phases.fast,
    slow: phases.slow,
    windowMonotonicMicros: [monotonic0, monotonic1],
  };
}

const spec = JSON.parse(process.argv[2]) as DriverSpec;
try {
  process.stdout.write(`${JSON.stringify(run(spec))}\n`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`lean driver: ${(err as Error).message}\n`);
  process.exit(1);
}
