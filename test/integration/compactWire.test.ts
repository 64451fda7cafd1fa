/**
 * The built spout speaking the compact wire format over real OS pipes (as Storm's ProcessBuilder gives
 * them), read with its blocking direct reads and their watchdog: frames trickling in a byte at a time,
 * slower than the watchdog's period, wake-up NULs among their bytes, still get exactly one sync per command. Nothing to read from: the
 * process runs with ZooKeeper and Kinesis unreachable, and answers Storm all the same.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMPACT_WIRE, WIRE_CONF_KEY } from '../../src/multilang/compact';
import { encodeCommands, type ProcessFrame, ProcessFrames } from '../helpers/compactStorm';
import { DEFAULT_FIELDS, ENTRY_SCRIPT, osPipe, statsCounters } from '../helpers/stormDriver';
import { SPOUT_NODE } from '../helpers/spoutNode';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('one sync per command, however slowly the frames arrive; logs and errors as compact frames', async () => {
  const stdin = osPipe();
  const stdout = osPipe();
  const child = spawn(SPOUT_NODE, [ENTRY_SCRIPT], {
    stdio: [stdin.read, stdout.write, 'ignore'],
    env: { ...process.env, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' },
  });
  closeSync(stdin.read);
  closeSync(stdout.write);
  const input = new Socket({ fd: stdin.write, readable: false, writable: true });
  const output = new Socket({ fd: stdout.read, readable: true, writable: false });
  let text = '';
  let pidReply: Record<string, unknown> | undefined;
  const reader = new ProcessFrames();
  const frames: ProcessFrame[] = [];
  output.on('data', (chunk: Buffer) => {
    if (pidReply) return void frames.push(...reader.push(chunk));
    text += chunk.toString('latin1');
    const end = text.indexOf('\nend\n');
    if (end < 0) return;
    pidReply = JSON.parse(text.slice(0, end));
    frames.push(...reader.push(Buffer.from(text.slice(end + 5), 'latin1')));
  });
  const conf = {
    [WIRE_CONF_KEY]: [COMPACT_WIRE],
    'kinesis.spout': {
      streamName: 'nowhere',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9',
      zookeeper: { connect: '127.0.0.1:9', root: '/compact' },
      applicationName: 'compact-wire',
      statsIntervalMs: 100,
    },
  };
  const context = {
    taskid: 1,
    componentid: 'kinesis',
    'task->component': { '1': 'kinesis' },
    'stream->outputfields': { default: DEFAULT_FIELDS },
  };
  const pidDir = mkdtempSync(join(tmpdir(), 'compact-pids-'));
  input.write(`${JSON.stringify({ pidDir, conf, context })}\nend\n`);
  try {
    const syncs = () => frames.filter((f) => f.command === 'sync').length;
    const until = async (what: string, ok: () => boolean) => {
      for (let i = 0; i < 200 && !ok(); i++) await sleep(50);
      if (!ok()) throw new Error(`waited for ${what}: ${JSON.stringify(frames.slice(-5))}`);
    };
    await until('the pid', () => pidReply !== undefined);
    expect(pidReply).toEqual({ pid: child.pid, wire: COMPACT_WIRE });
    // An ack: tuples flow, which starts the watchdog thread and the direct reads (idle, the process has
    // neither).
    input.write(encodeCommands([{ command: 'acks', acks: ['shardId-000000000000:0'] }]));
    // The watchdog, a new V8 isolate, may take a while to come online on a loaded machine; until then the
    // event loop reads every command. Storm's `next`, as Storm sends it, until one was read directly.
    const statsValue = (name: string) => {
      const last = frames
        .map((f) => (f.command === 'log' ? (f as { msg: string }).msg : ''))
        .filter((m) => m.startsWith('stats: '))
        .at(-1);
      return last ? (statsCounters(last)[name] ?? 0) : 0;
    };
    let warmUp = 0;
    for (; statsValue('directReads') === 0 && warmUp < 400; warmUp++) {
      input.write(encodeCommands([{ command: 'next', acks: [] }]));
      await sleep(25);
    }
    await until('the warm-up answered', () => syncs() >= 1 + warmUp);
    // Quiet long enough for the watchdog to hand the process back to its event loop more than once.
    await sleep(300);
    const directBefore = statsValue('directReads');
    const wakesBefore = statsValue('watchdogWakes');
    const commands = encodeCommands([
      { command: 'activate' },
      { command: 'next', acks: ['shardId-000000000000:1', 'shardId-000000000000:2'] },
      { command: 'acks', acks: ['shardId-000000000000:3'] },
      { command: 'fail', id: 'shardId-000000000000:4', acks: [] },
      { command: 'deactivate' },
    ]);
    // Each frame a byte at a time, 25 ms apart: past the watchdog's 10-20 ms, so its wake-ups land inside
    // frames; and after every fifth byte a NUL of the test's own, as a wake-up written late would be.
    let sent = 0;
    for (const byte of commands.subarray(0, 40)) {
      input.write(Buffer.from(++sent % 5 === 0 ? [byte, 0] : [byte]));
      await sleep(25);
    }
    input.write(commands.subarray(sent));
    await until('6 syncs', () => syncs() >= 6 + warmUp);
    await sleep(300);
    expect(syncs()).toBe(6 + warmUp);
    expect(reader.hasPartialFrame()).toBe(false);
    const logs = frames.filter((f) => f.command === 'log').map((f) => (f as { msg: string }).msg);
    expect(logs).toContainEqual(`speaking the ${COMPACT_WIRE} wire format with Storm`);
    expect(logs).toContainEqual('activated: listing shards again');
    expect(logs).toContainEqual(
      'deactivated: reading stopped, acks still checkpointed; leases kept unless another topology of this application is active',
    );
    // The trickled frames went through the blocking reads, and the watchdog ended some of them.
    expect(statsValue('directReads')).toBeGreaterThan(directBefore);
    expect(statsValue('watchdogWakes')).toBeGreaterThan(wakesBefore);
  } finally {
    child.kill('SIGKILL');
    input.destroy();
    output.destroy();
  }
}, 60_000);
