/**
 * The spout process: speaks the multilang protocol on stdin/stdout (stdout carries frames only; everything
 * a human should see goes through `log`), wires configuration, Kinesis, ZooKeeper and the spout together.
 */
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type SpoutConfig } from '../config/config';
import { checkOutputFields, kryoWarning } from '../config/stormChecks';
import { diagnosingConnect } from '../coordination/diagnose';
import { ZkSession } from '../coordination/zk';
import { LogLevel, type Logger } from '../core/log';
import { realScheduler } from '../core/scheduler';
import { describeError } from '../errors';
import { createKinesisClient, type KinesisApi } from '../kinesis/client';
import { createFanOutClient } from '../kinesis/fanOutClient';
import { FrameDecoder } from '../multilang/frames';
import { metricsRegistration, metricsSendIntervalMs, type MetricsRegistration } from '../multilang/metricsRegistration';
import { parseCommand, parseHandshake, type SpoutCommand, StormOutput, taskPosition } from '../multilang/protocol';
import { CompactOutput, type SpoutOutput } from '../multilang/compactProtocol';
import { compactInput, offeredWire, replayJsonFrames } from './compactWire';
import { StormStdio } from '../multilang/stdio';
import { StreamSet } from '../spout/streamSet';
import { KinesisSpout } from '../spout/spout';
import { answersOnlySync, failureDue, failureReport, STOPPING_EXIT_AFTER_MS, type Lifecycle } from './lifecycle';
import { startNotes } from '../config/startNotes';
import { memoryStats } from './memoryStats';
import { nodeVersionNote } from './nodeVersion';

const SHUTDOWN_TIMEOUT_MS = 5_000;

const decoder = new FrameDecoder();
let handshaken = false;
const stdio = new StormStdio({
  onText,
  onEnd: () => void exitAfterShutdown('stdin closed: Storm is gone'),
  onOutputError: () => void exitAfterShutdown('stdout closed'),
  onWarning: (message) => out.log(message, LogLevel.Warn),
});
const jsonOut = new StormOutput((text, reply) => stdio.write(text, reply));
/** Storm's JSON frames, or the compact ones once the handshake chose them. */
let out: SpoutOutput = jsonOut;
let compact = false;
const logger: Logger = {
  log: (level, message) => out.log(message, level),
  error: (message) => out.error(message),
};

/** To the Storm UI (`error`) and the worker's log, at `level`. */
function report(message: string, level: LogLevel = LogLevel.Error): void {
  out.error(message);
  out.log(message, level);
}

let spout: KinesisSpout | undefined;
/** The streams read, one coordinator each. */
let coordinator: StreamSet | undefined;
let lifecycle: Lifecycle = { kind: 'starting' };
/** Flushing checkpoints and giving up leases, once: started by a failure, a signal or stdin closing. */
let coordinatorStopped: Promise<void> | undefined;
/** The Storm metrics to report to (none without the Java side's registration), and whether a send is due. */
let metrics: MetricsRegistration | undefined;
let metricsDue = false;

function stopCoordinator(): Promise<void> {
  coordinatorStopped ??= (coordinator?.shutdown(SHUTDOWN_TIMEOUT_MS) ?? Promise.resolve()).catch((err) =>
    out.log(`stopping: ${describeError(err)}`, LogLevel.Warn),
  );
  return coordinatorStopped;
}

/**
 * This process cannot read (a bad configuration, a crash): says why through Storm's `error` and `log`,
 * gives up its leases (so other tasks read its shards), and stays alive answering Storm without emitting.
 */
function fail(message: string): void {
  if (lifecycle.kind === 'failed' || lifecycle.kind === 'stopping') return;
  const reason = failureReport(message);
  lifecycle = { kind: 'failed', reason, reportedAt: performance.now() };
  report(reason);
  void stopCoordinator();
}

/** Told to stop: checkpoints and leases at once, then only `sync` until Storm closes stdin (bounded). */
function beginStopping(why: string): void {
  if (lifecycle.kind === 'stopping') return;
  lifecycle = { kind: 'stopping', why };
  stdio.stop();
  try {
    out.log(`stopping (${why}): flushing checkpoints and giving up leases; answering Storm until it closes stdin`);
  } catch {
    // stdout may be gone with Storm.
  }
  void stopCoordinator();
  setTimeout(
    () => void exitAfterShutdown(`${why}, and Storm did not close stdin within ${STOPPING_EXIT_AFTER_MS} ms`),
    STOPPING_EXIT_AFTER_MS,
  ).unref();
}

let exiting = false;

/** Storm is gone (or we may wait no longer): finish giving up leases, then exit. */
async function exitAfterShutdown(why: string): Promise<void> {
  if (exiting) return;
  exiting = true;
  stdio.stop();
  if (!coordinatorStopped) {
    try {
      out.log(`stopping (${why}): flushing checkpoints and giving up leases`);
    } catch {
      // stdout may be gone with Storm.
    }
  }
  await stopCoordinator();
  process.exit(0);
}

export interface RunOptions {
  /** How the Kinesis client is made; benchmarks hand in a synthetic source. */
  createKinesis?: (config: SpoutConfig) => KinesisApi;
  /** How the HTTP/2 client of `readMode: "fanOut"` is made. */
  createFanOutKinesis?: (config: SpoutConfig) => KinesisApi;
}

let options: RunOptions = {};

function onHandshake(body: string): void {
  // Storm waits for the pid with no timeout and takes it from the first frame it reads: it goes out before
  // anything that could block or fail, even a handshake this cannot read (Storm then lives to show why).
  const wire = offeredWire(body);
  if (wire) {
    useCompact(jsonOut.pidAccepting(process.pid, wire));
    out.log(`speaking the ${wire} wire format with Storm`);
  } else jsonOut.pid(process.pid);
  const handshake = parseHandshake(body);
  writePidFile(handshake.pidDir);
  // Told to stop (or crashed) before Storm even said hello: the pid is all it gets.
  if (lifecycle.kind !== 'starting') return;
  const node = nodeVersionNote(process.version);
  out.log(node.message, node.level);
  let config: SpoutConfig;
  try {
    config = loadConfig(handshake.conf, process.argv[2]);
    checkOutputFields(config, handshake.context);
  } catch (err) {
    fail(describeError(err));
    return;
  }
  lifecycle = { kind: 'running' };
  for (const note of startNotes(config)) out.log(note.message, note.level);
  const kryo = kryoWarning(config, handshake.conf);
  if (kryo) report(kryo, LogLevel.Warn);
  if (config.directStdio) {
    const why = stdio.enableDirect();
    if (why) out.log(`answering Storm through the event loop only: ${why}`, LogLevel.Debug);
  }
  const task = taskPosition(handshake.context);
  // Set by Nimbus at submit: tells this topology from another version of it deployed beside it.
  const topology = typeof handshake.conf['storm.id'] === 'string' ? handshake.conf['storm.id'] : undefined;
  coordinator = new StreamSet({
    config,
    createKinesis: (kinesisOptions) => (options.createKinesis ?? createKinesisClient)({ ...config, ...kinesisOptions }),
    createFanOutKinesis: (kinesisOptions) =>
      (options.createFanOutKinesis ?? createFanOutClient)({ ...config, ...kinesisOptions }),
    zookeeper: diagnosingConnect((zkOptions) => ZkSession.connect(zkOptions)),
    logger,
    scheduler: realScheduler,
    member: {
      taskIndex: task.index,
      taskCount: task.count,
      host: hostname(),
      pid: process.pid,
      topology,
    },
  });
  spout = new KinesisSpout(config, coordinator.spoutStreams, logger, realScheduler, compact);
  const reading = coordinator.streams.map(({ config: own }) => own.streamArn ?? own.streamName).join(', ');
  out.log(
    // Numbered from 0, as the member ids (task<index>-...) and `status` number the tasks.
    `kinesis-shell-spout task ${task.index} (of 0..${task.count - 1}) reading ${reading} as application ${config.applicationName}${topology ? `, topology ${topology}` : ''}`,
  );
  coordinator.start();
  setInterval(() => logStats(config), config.statsIntervalMs).unref();
  startMetrics(handshake.conf);
}

/**
 * The pid file lets Storm's supervisor signal this process when it stops the worker. Without it the spout
 * still reads, and still stops when Storm closes its stdin (which a dying worker always does).
 */
function writePidFile(pidDir: string): void {
  const path = join(pidDir, String(process.pid));
  try {
    writeFileSync(path, '');
  } catch (err) {
    report(
      `cannot write the pid file ${path} (${describeError(err)}): Storm's supervisor cannot signal this process; it still stops when its worker closes stdin. Check that the worker's pids directory exists and is writable`,
      LogLevel.Warn,
    );
  }
}

function startMetrics(conf: Record<string, unknown>): void {
  try {
    metrics = metricsRegistration(conf);
  } catch (err) {
    report(describeError(err));
    return;
  }
  if (!metrics) return;
  const everyMs = metricsSendIntervalMs(metrics);
  out.log(`reporting metrics ${metrics.process} and ${metrics.shards} every ${everyMs / 1000} s`);
  setInterval(() => (metricsDue = true), everyMs).unref();
}

/**
 * Sent within a command's reply: Storm reads our output only while it waits for a sync, so frames written
 * while it is quiet (deactivated, nothing in flight) would pile up; the counts wait in memory instead.
 */
function sendMetrics(): void {
  metricsDue = false;
  if (!metrics || !coordinator || lifecycle.kind !== 'running') return;
  const report = coordinator.takeMetrics(realScheduler.now());
  out.metrics(metrics.process, report.process);
  out.metrics(metrics.shards, report.shards);
}

function logStats(config: SpoutConfig): void {
  if (!spout || !coordinator || lifecycle.kind !== 'running') return;
  const c = spout.counters;
  const io = coordinator.io;
  out.log(
    `stats: emitted=${c.emitted} reemitted=${c.reemitted} acked=${c.acked} failed=${c.failed} skipped=${c.skipped} deadLettered=${c.deadLettered} ignoredAcks=${c.ignoredAcks} tooOld=${c.tooOld} ` +
      `shards=${coordinator.shardCount} inMemory=${coordinator.inMemory()} bytesInMemory=${coordinator.bytesInMemory()} getRecords=${io.getRecords} listShards=${io.listShards} checkpointWrites=${io.checkpointWrites} checkpointWritesDeferred=${io.checkpointWritesDeferred} ` +
      `directReads=${stdio.counters.directReads} loopReads=${stdio.counters.loopReads} watchdogWakes=${stdio.counters.watchdogWakes} ` +
      `${memoryStats()} intervalMs=${config.statsIntervalMs}`,
  );
}

/** A JSON frame carries no acks besides its command: one array for all, none made per command. */
const NO_ACKS: readonly unknown[] = [];

function onCommand(body: string): void {
  let command: SpoutCommand | undefined;
  let bad: unknown;
  try {
    command = parseCommand(body);
  } catch (err) {
    bad = err;
  }
  answer(NO_ACKS, command, bad);
}

/**
 * Answers one command from Storm: the acks its frame carried first (the compact format's), then the
 * command, then exactly one sync, whatever went wrong (Storm waits for it).
 */
function answer(acks: readonly unknown[], command: SpoutCommand | undefined, bad?: unknown): void {
  out.beginCommand();
  if (answersOnlySync(lifecycle)) {
    if (failureDue(lifecycle, performance.now()) && lifecycle.kind === 'failed') {
      lifecycle = { ...lifecycle, reportedAt: performance.now() };
      report(lifecycle.reason);
    }
    out.sync();
    return;
  }
  if (bad !== undefined) report(describeError(bad));
  for (const id of acks) {
    try {
      spout!.ack(id);
    } catch (err) {
      report(describeError(err));
    }
  }
  try {
    if (command) handle(command);
  } catch (err) {
    report(describeError(err));
  }
  // Tuples flow (one emitted, acked or failed): time for the blocking reads and their watchdog thread, which
  // a process whose shards are idle never pays for.
  if (acks.length > 0 || command?.command === 'ack' || command?.command === 'fail' || spout!.counters.emitted > 0)
    stdio.busy();
  if (metricsDue) sendMetrics();
  out.sync();
}

/** From now on the compact format, both ways; `early` holds the JSON frames said before the pid. */
function useCompact(early: string): void {
  compact = true;
  out = new CompactOutput((bytes, reply) => stdio.writeBytes(bytes, reply));
  replayJsonFrames(early, out);
  stdio.useBytes(
    compactInput({
      command: answer,
      // The frame's acks cannot be trusted: this process stops reading (its shards go to other tasks from
      // their checkpoints) rather than hold records whose outcome it lost.
      badFrame: (err) => {
        out.beginCommand();
        fail(describeError(err));
        out.sync();
      },
      // Where the next frame starts is lost: no command can be answered any more. Storm learns why, and
      // sees the process exit (checkpoints flushed, leases given up for other tasks to re-read).
      broken: (err) => {
        report(`${describeError(err)}: stopping`);
        void exitAfterShutdown('the compact stream from Storm cannot be read');
      },
    }),
  );
}

function handle(command: SpoutCommand): void {
  switch (command.command) {
    case 'next':
      spout!.next(out);
      break;
    case 'ack':
      spout!.ack(command.id);
      break;
    case 'fail':
      spout!.fail(command.id, out);
      break;
    case 'activate':
      out.log('activated: listing shards again');
      coordinator!.activate();
      break;
    case 'deactivate':
      out.log(
        'deactivated: reading stopped, acks still checkpointed; leases kept unless another topology of this application is active',
      );
      coordinator!.deactivate();
      break;
  }
}

function onText(text: string): void {
  for (const body of decoder.push(text)) {
    if (!handshaken) {
      handshaken = true;
      try {
        onHandshake(body);
      } catch (err) {
        fail(`cannot start: ${describeError(err)}`);
      }
    } else {
      onCommand(body);
    }
  }
}

export function runSpout(runOptions: RunOptions = {}): void {
  options = runOptions;
  stdio.start();
  process.on('SIGTERM', () => beginStopping('SIGTERM'));
  process.on('SIGINT', () => beginStopping('SIGINT'));
  process.on('uncaughtException', (err) =>
    fail(`kinesis-shell-spout crashed: ${describeError(err)}\n${err.stack ?? ''}`),
  );
  // Node prints warnings (such as the AWS SDK's) on stderr, which Storm drains only now and then.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => out.log(`node warning: ${warning.name}: ${warning.message}`, LogLevel.Debug));
  process.on('unhandledRejection', (err) => out.log(`unhandled rejection: ${describeError(err)}`, LogLevel.Warn));
}
