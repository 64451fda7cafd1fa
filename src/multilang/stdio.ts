/**
 * Storm's two pipes, read and written with as little of Node's machinery per command as it takes.
 *
 * Storm sends one command and reads until its `sync`: every ack is a round trip. Through the event loop
 * each one costs an epoll wake, a stream `data` event and a queued write. While Storm keeps sending, this
 * reads the commands with blocking reads of its own descriptor of the stdin pipe and answers with
 * blocking writes (Storm is reading then), giving the event loop a turn every `SLICE_MS` so the ZooKeeper
 * client, the shard readers and the timers run. When Storm goes quiet, a watchdog thread ends the blocked
 * read within 2 × `WATCHDOG_MS` by writing one NUL byte into the pipe and the process waits in the event loop
 * again until Storm speaks. The byte may land anywhere, even inside a frame Storm writes in pieces (the
 * watchdog cannot check and write in one step): Storm never sends a NUL (JSON escapes it, UTF-8 never uses
 * it, the compact format's Storm side escapes it, see nulEscape.ts), so every NUL read is dropped.
 * Anything but pipes (sockets, files, a terminal) is served by the event loop alone.
 *
 * The watchdog is a worker thread, a V8 isolate with a Node environment of its own: about 10 MiB resident
 * on Node 24 (12-13 MiB of a spout's RSS measured with and without it), kept once started (a terminated
 * worker gives back less than half). It starts when tuples flow (`busy()`: the first one emitted, acked or
 * failed), not at start: a process whose shards are idle answers Storm's `next`, at most about a thousand
 * a second, through the event loop and never pays for it.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { Worker } from 'node:worker_threads';
import { SYNC_FRAME } from './protocol';

/** The reply to most commands (every ack), encoded once. */
const SYNC_BYTES = Buffer.from(SYNC_FRAME);

/** The most memory kept for encoding replies between commands (a larger reply gets a buffer of its own). */
const REPLY_BUFFER_KEPT = 4 * 1024 * 1024;

/**
 * Longest run of commands answered without giving the event loop a turn. Every ZooKeeper or Kinesis
 * answer waits for that turn: at 5 ms, taking 64 leases while Storm kept asking took seconds; a turn with
 * nothing to do costs a few microseconds.
 */
const SLICE_MS = 1;
/** A blocking read that waited this long for Storm (up to twice this) gives the process back to the event loop. */
const WATCHDOG_MS = 10;

/** Shared with the watchdog: [blocked in a read (0/1), reads started, direct mode on (0/1)]. */
const BLOCKED = 0;
const STARTED = 1;
const DIRECT = 2;

/**
 * The watchdog, run as a worker without an event loop. It sleeps while the direct mode is off; while it
 * is on, it looks every period for a read that was already blocked a period ago and still is.
 */
const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { state, stdinPath, periodMs } = workerData;
for (;;) {
  Atomics.wait(state, ${DIRECT}, 0);
  const blocked = Atomics.load(state, ${BLOCKED});
  const started = Atomics.load(state, ${STARTED});
  Atomics.wait(state, ${DIRECT}, 1, periodMs);
  if (blocked === 1 && Atomics.load(state, ${BLOCKED}) === 1 && Atomics.load(state, ${STARTED}) === started) {
    try {
      const fd = fs.openSync(stdinPath, 'w');
      try { fs.writeSync(fd, Buffer.alloc(1)); } finally { fs.closeSync(fd); }
    } catch {}
  }
}`;

export interface StdioCounters {
  /** Reads answered without the event loop. */
  directReads: number;
  /** Reads delivered by the event loop (stdin stream). */
  loopReads: number;
  /** Blocked reads the watchdog ended because Storm was quiet. */
  watchdogWakes: number;
}

export interface StdioHandlers {
  /** Text read from Storm, in order, whichever way it came. */
  onText(text: string): void;
  onEnd(): void;
  /** stdout is gone (Storm died): nothing more can be said. */
  onOutputError(err: Error): void;
  /** Something Storm's log should show. */
  onWarning(message: string): void;
}

/** A second descriptor of one of this process's pipes, or undefined when it is not a pipe. */
function reopenPipe(fd: number, flags: 'r' | 'w'): number | undefined {
  try {
    if (!fstatSync(fd).isFIFO()) return undefined;
    return openSync(`/proc/self/fd/${fd}`, flags);
  } catch {
    return undefined;
  }
}

/**
 * Bytes read from Storm, in any pieces, as text: NUL bytes (the watchdog's wake-ups) dropped before
 * decoding, so a wake-up landing inside a UTF-8 sequence split across two writes harms nothing.
 */
export class StdinText {
  private readonly decoder = new StringDecoder('utf8');

  push(chunk: Buffer): string {
    return this.decoder.write(chunk.indexOf(0) === -1 ? chunk : Buffer.from(chunk.filter((byte) => byte !== 0)));
  }
}

export class StormStdio {
  readonly counters: StdioCounters = { directReads: 0, loopReads: 0, watchdogWakes: 0 };
  private readonly text = new StdinText();
  private direct:
    | { stdin: number; stdout: number; state: Int32Array; buffer: Buffer; worker?: Worker; watching: boolean }
    | undefined;
  private scheduled = false;
  private stopped = false;
  private ended = false;
  /** Set once the compact format is chosen: raw bytes from then on. */
  private onBytes: ((chunk: Buffer) => void) | undefined;

  constructor(private readonly handlers: StdioHandlers) {}

  /** Starts reading stdin through the event loop. */
  start(): void {
    process.stdin.on('data', (chunk: Buffer) => {
      this.counters.loopReads += 1;
      // A late wake-up alone is no sign that Storm is busy again.
      if (this.deliver(chunk)) this.scheduleDirect();
    });
    process.stdin.on('end', () => this.end());
    process.stdout.on('error', (err) => this.handlers.onOutputError(err));
  }

  /**
   * Turns on direct writes, and direct reads once `busy()` has started their watchdog, if stdin and stdout
   * are pipes. Returns why not, or undefined when they are on.
   */
  enableDirect(): string | undefined {
    if (this.direct) return undefined;
    const stdin = reopenPipe(0, 'r');
    const stdout = reopenPipe(1, 'w');
    if (stdin === undefined || stdout === undefined) {
      for (const fd of [stdin, stdout]) if (fd !== undefined) closeSync(fd);
      return 'stdin and stdout are not both pipes';
    }
    const state = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
    this.direct = { stdin, stdout, state, buffer: Buffer.allocUnsafe(64 * 1024), watching: false };
    return undefined;
  }

  /**
   * Tuples flow: starts the watchdog, once, and with it the direct reads as soon as it runs. Until then
   * the event loop reads every command.
   */
  busy(): void {
    const direct = this.direct;
    if (!direct || direct.worker || this.stopped) return;
    let worker: Worker;
    try {
      worker = new Worker(WATCHDOG_SOURCE, {
        eval: true,
        workerData: { state: direct.state, stdinPath: `/proc/${process.pid}/fd/0`, periodMs: WATCHDOG_MS },
      });
    } catch (err) {
      this.disableDirect(direct, `no watchdog thread: ${(err as Error).message}`);
      return;
    }
    direct.worker = worker;
    worker.unref();
    worker.on('online', () => {
      direct.watching = true;
    });
    // Without its watchdog, a blocking read could hold the process for as long as Storm is quiet.
    worker.on('error', (err) => this.disableDirect(direct, `the watchdog thread failed (${err.message})`));
    worker.on('exit', (code) => this.disableDirect(direct, `the watchdog thread exited (code ${code})`));
  }

  /**
   * Writes frames. A reply (the frames answering a command, up to its sync) is written straight to the
   * pipe while Storm reads it; anything else, or anything behind text Node still holds, goes through
   * Node's stream so a quiet Storm never blocks the process.
   */
  write(text: string, reply: boolean): void {
    if (reply && this.direct && process.stdout.writableLength === 0) {
      try {
        if (text === SYNC_FRAME) {
          for (let offset = 0; offset < SYNC_BYTES.length; )
            offset += writeSync(this.direct.stdout, SYNC_BYTES, offset);
          return;
        }
        // Encoded once into a buffer kept for the next reply (UTF-8 takes at most 3 bytes per UTF-16 unit,
        // so it always fits): no allocation, no second pass to count the bytes, whatever a signal cuts short.
        const bytes = this.replyBuffer(text.length * 3);
        const size = bytes.write(text, 0, 'utf8');
        for (let offset = 0; offset < size; ) offset += writeSync(this.direct.stdout, bytes, offset, size - offset);
      } catch (err) {
        this.handlers.onOutputError(err as Error);
      }
      return;
    }
    process.stdout.write(text);
  }

  /** From now on, what Storm sends goes to `onBytes` as bytes, wake-up NULs included (it drops them). */
  useBytes(onBytes: (chunk: Buffer) => void): void {
    this.onBytes = onBytes;
  }

  /** `write`'s counterpart for the compact format; `bytes` may be reused once this returns. */
  writeBytes(bytes: Buffer, reply: boolean): void {
    if (reply && this.direct && process.stdout.writableLength === 0) {
      try {
        for (let offset = 0; offset < bytes.length; )
          offset += writeSync(this.direct.stdout, bytes, offset, bytes.length - offset);
      } catch (err) {
        this.handlers.onOutputError(err as Error);
      }
      return;
    }
    process.stdout.write(Buffer.from(bytes));
  }

  private encoded = Buffer.allocUnsafe(0);

  /** A buffer of at least `bytes`, kept between replies unless it would hold more than REPLY_BUFFER_KEPT. */
  private replyBuffer(bytes: number): Buffer {
    if (this.encoded.length >= bytes) return this.encoded;
    const buffer = Buffer.allocUnsafe(Math.max(bytes, 64 * 1024));
    if (buffer.length <= REPLY_BUFFER_KEPT) this.encoded = buffer;
    return buffer;
  }

  /** Back to the event loop for good (called from the event loop, so never during a blocking read). */
  private disableDirect(direct: NonNullable<StormStdio['direct']>, why: string): void {
    if (this.direct !== direct) return;
    closeSync(direct.stdin);
    closeSync(direct.stdout);
    this.direct = undefined;
    void direct.worker?.terminate();
    this.handlers.onWarning(`answering Storm through the event loop only from now on: ${why}`);
  }

  /** Stops direct reads (shutting down: only the event loop from now on). */
  stop(): void {
    this.stopped = true;
    if (this.direct) Atomics.store(this.direct.state, DIRECT, 0);
  }

  /** Hands on what `chunk` completes; false when that is nothing. */
  private deliver(chunk: Buffer): boolean {
    if (this.onBytes) {
      this.onBytes(chunk);
      return chunk.length !== 1 || chunk[0] !== 0;
    }
    const text = this.text.push(chunk);
    if (text !== '') this.handlers.onText(text);
    return text !== '';
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.stop();
    this.handlers.onEnd();
  }

  private scheduleDirect(): void {
    if (!this.direct?.watching || this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.readDirect();
    });
  }

  /** Answers commands as they come for up to SLICE_MS, then lets the event loop run and comes back. */
  private readDirect(): void {
    const direct = this.direct;
    if (!direct?.watching) return;
    const { state, buffer } = direct;
    // Woken only when the direct mode starts: coming back from a slice's turn of the event loop, the
    // watchdog is already watching (a wake-up per slice would cost a thread switch each time).
    if (Atomics.exchange(state, DIRECT, 1) === 0) Atomics.notify(state, DIRECT);
    const until = performance.now() + SLICE_MS;
    // Something Node still has to write would wait behind a blocking read: let the event loop send it.
    while (!this.stopped && process.stdout.writableLength === 0) {
      Atomics.add(state, STARTED, 1);
      Atomics.store(state, BLOCKED, 1);
      let read: number;
      try {
        read = readSync(direct.stdin, buffer, 0, buffer.length, null);
      } catch (err) {
        Atomics.store(state, DIRECT, 0);
        const code = (err as NodeJS.ErrnoException).code;
        // Interrupted: the event loop reads instead, this time.
        if (code !== 'EINTR' && code !== 'EAGAIN')
          this.disableDirect(direct, `reading stdin failed (${code ?? String(err)})`);
        return;
      } finally {
        Atomics.store(state, BLOCKED, 0);
      }
      if (read === 0) return this.end();
      this.counters.directReads += 1;
      if (read === 1 && buffer[0] === 0) {
        // The watchdog: Storm is quiet, wait for it in the event loop.
        this.counters.watchdogWakes += 1;
        break;
      }
      this.deliver(buffer.subarray(0, read));
      if (performance.now() >= until) return this.scheduleDirect();
    }
    Atomics.store(state, DIRECT, 0);
  }
}
