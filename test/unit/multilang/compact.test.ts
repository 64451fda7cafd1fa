import fc from 'fast-check';
import { compactInput, offeredWire, replayJsonFrames } from '../../../src/cli/compactWire';
import { LogLevel } from '../../../src/core/log';
import { COMPACT_WIRE, FrameCutter, FrameWriter, WIRE_CONF_KEY } from '../../../src/multilang/compact';
import { CompactOutput, parseCompactCommand } from '../../../src/multilang/compactProtocol';
import { escapeNul } from '../../../src/multilang/nulEscape';
import type { SpoutCommand } from '../../../src/multilang/protocol';
import { encodeCommands, type ProcessFrame, ProcessFrames, type StormCommand } from '../../helpers/compactStorm';

/** Feeds `bytes` cut at `cuts` into `push`. */
function feed(bytes: Buffer, cuts: number[], push: (chunk: Buffer) => void): void {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let last = 0;
  for (const p of [...points, bytes.length]) {
    // A copy, then the caller's buffer overwritten: as the stdin reader reuses its buffer.
    const chunk = Buffer.from(bytes.subarray(last, p));
    push(chunk);
    chunk.fill(0xee);
    last = p;
  }
}

/** `bytes` with a wake-up NUL before each of `at` (positions wrapped to its length). */
function withNuls(bytes: Buffer, at: number[]): Buffer {
  const points = at.map((p) => p % (bytes.length + 1)).sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let last = 0;
  for (const p of points) {
    parts.push(bytes.subarray(last, p), Buffer.alloc(1));
    last = p;
  }
  parts.push(bytes.subarray(last));
  return Buffer.concat(parts);
}

/** A process's output written through CompactOutput, with what it was asked to say. */
function capture(): { out: CompactOutput; writes: { bytes: Buffer; reply: boolean }[] } {
  const writes: { bytes: Buffer; reply: boolean }[] = [];
  // The output reuses its buffer: keep a copy of each write.
  const out = new CompactOutput((bytes, reply) => writes.push({ bytes: Buffer.from(bytes), reply }));
  return { out, writes };
}

/** What a value becomes on the way (objects and arrays go as JSON text; JSON has no undefined or NaN). */
function expected(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  if (typeof value === 'number' && Object.is(value, -0)) return 0;
  if (value instanceof Uint8Array) return Buffer.from(value);
  if (typeof value === 'object' && value !== null) return JSON.parse(JSON.stringify(value));
  return value;
}

const tupleValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string(),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constantFrom(null, undefined, true, false, 0x7fffffff, -0x80000000, 0x80000000, Number.MAX_SAFE_INTEGER),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).filter((b) => b < -(2n ** 53n) || b > 2n ** 53n),
  fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
  fc.jsonValue().filter((v) => typeof v === 'object' && v !== null),
);

describe('compact format: the process to Storm', () => {
  it('round-trips random tuples, ids and streams, however the bytes are cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.string(), tuple: fc.array(tupleValue, { maxLength: 8 }), stream: fc.string() }), {
          maxLength: 10,
        }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (emits, cuts) => {
          const { out, writes } = capture();
          out.beginCommand();
          for (const e of emits) out.emit(e.id, e.tuple, e.stream);
          out.sync();
          expect(writes).toHaveLength(1);
          const reader = new ProcessFrames();
          const got: ProcessFrame[] = [];
          feed(writes[0].bytes, cuts, (chunk) => got.push(...reader.push(chunk)));
          expect(reader.hasPartialFrame()).toBe(false);
          expect(got).toEqual([
            ...emits.map((e) => ({
              command: 'emit',
              id: e.id,
              stream: e.stream === '' ? 'default' : e.stream,
              task: 0,
              needTaskIds: false,
              tuple: e.tuple.map(expected),
            })),
            { command: 'sync' },
          ]);
        },
      ),
    );
  });

  it('carries logs (with their level), errors, metrics and unanchored emits; one write per command', () => {
    const { out, writes } = capture();
    out.log('said outside a command', LogLevel.Warn);
    out.beginCommand();
    out.error('failed: é\n"quoted"');
    out.metrics('kinesis-spout', { shards: 3, nested: { a: [1, 2.5, null] } });
    out.emitUnanchored(['dead', 2], 'dlq');
    out.emit(undefined, ['untracked'], 'default');
    out.log('debug line', LogLevel.Debug);
    out.sync();
    out.beginCommand();
    out.sync();
    expect(writes.map((w) => w.reply)).toEqual([false, true, true]);
    const reader = new ProcessFrames();
    expect(writes.map((w) => reader.push(w.bytes))).toEqual([
      [{ command: 'log', level: 3, msg: 'said outside a command' }],
      [
        { command: 'error', msg: 'failed: é\n"quoted"' },
        { command: 'metrics', name: 'kinesis-spout', params: { shards: 3, nested: { a: [1, 2.5, null] } } },
        { command: 'emit', id: null, stream: 'dlq', task: 0, needTaskIds: false, tuple: ['dead', 2] },
        { command: 'emit', id: null, stream: 'default', task: 0, needTaskIds: false, tuple: ['untracked'] },
        { command: 'log', level: 1, msg: 'debug line' },
        { command: 'sync' },
      ],
      [{ command: 'sync' }],
    ]);
  });
});

describe('compact format: Storm to the process', () => {
  /** compactInput with what it reports written down as lines. */
  const recordedInput = () => {
    const events: string[] = [];
    const push = compactInput({
      command: (acks, c) => events.push(`command ${c?.command}${acks.length > 0 ? ` ${acks.join(',')}` : ''}`),
      badFrame: (err) => events.push(`bad: ${(err as Error).message}`),
      broken: (err) => events.push(`broken: ${(err as Error).message}`),
    });
    return { events, push };
  };
  const ackId = fc.oneof(fc.string(), fc.integer());
  const command: fc.Arbitrary<StormCommand> = fc.oneof(
    fc.record({
      command: fc.constantFrom('next', 'activate', 'deactivate', 'acks') as fc.Arbitrary<'next'>,
      acks: fc.array(ackId, { maxLength: 5 }),
    }),
    fc.record({ command: fc.constant('fail' as const), id: ackId, acks: fc.array(ackId, { maxLength: 5 }) }),
    fc.record({ command: fc.constant('taskIds' as const), ids: fc.array(fc.integer({ min: 1, max: 1 << 20 })) }),
  );

  it('round-trips commands with their deferred acks, through NUL wake-up bytes anywhere and any cut', () => {
    fc.assert(
      fc.property(
        fc.array(command, { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (commands, cuts, wakes) => {
          const bytes = withNuls(encodeCommands(commands), wakes);
          const got: { acks: unknown[]; command: SpoutCommand | undefined }[] = [];
          const push = compactInput({
            command: (acks, c) => got.push({ acks, command: c }),
            badFrame: (err) => {
              throw err;
            },
            broken: (err) => {
              throw err;
            },
          });
          feed(bytes, cuts, push);
          const want = commands
            .filter((c) => c.command !== 'taskIds')
            .map((c) => ({
              acks: 'acks' in c ? (c.acks ?? []) : [],
              command:
                c.command === 'acks'
                  ? undefined
                  : c.command === 'fail'
                    ? { command: 'fail', id: c.id }
                    : { command: c.command },
            }));
          expect(got).toEqual(want);
        },
      ),
    );
  });

  it('reports a frame whose body does not parse, and reads on after it', () => {
    const bad = new FrameWriter();
    bad.begin(0x4e); // next, with one ack of an unknown value type
    bad.u32(1);
    bad.u8(0x3f);
    bad.end();
    const leftover = new FrameWriter();
    leftover.begin(0x56); // activate, with a byte after its last field
    leftover.u32(0);
    leftover.u8(1);
    leftover.end();
    const { events, push } = recordedInput();
    push(
      Buffer.concat([
        escapeNul(bad.take()),
        escapeNul(leftover.take()),
        encodeCommands([{ command: 'next', acks: ['s:1'] }]),
      ]),
    );
    expect(events).toEqual([
      'bad: compact frame: unknown value type 0x3f at byte 9',
      'bad: compact frame 0x56: bytes left over after its last field',
      'command next s:1',
    ]);
  });

  it('stops, saying why, when the stream cannot be cut into frames any more', () => {
    const { events, push } = recordedInput();
    push(Buffer.concat([encodeCommands([{ command: 'next' }]), Buffer.from('{"command":"next"}\nend\n')]));
    push(encodeCommands([{ command: 'next' }]));
    expect(events).toEqual([
      'command next',
      'broken: compact frame: the stream cannot be read on (tag 0x7b, body length 576941933); bytes: 7b22636f6d6d616e64223a226e657874227d0a656e640a',
    ]);
    expect(() => new FrameCutter().push(Buffer.from([0x4e, 0xff, 0, 0, 0]), () => undefined)).toThrow(
      /cannot be read on/,
    );
  });

  it('stops at an escape byte followed by anything but 01 or 02', () => {
    const { events, push } = recordedInput();
    const next = encodeCommands([{ command: 'next' }]);
    push(Buffer.concat([next, next.subarray(0, 1), Buffer.from([1])]));
    push(Buffer.from([0, 3]));
    push(next);
    expect(events).toEqual([
      'command next',
      'broken: compact stream: the escape byte 01 is followed by 03 (only 01 or 02 may follow it)',
    ]);
  });

  it('rejects an unknown command tag', () => {
    const w = new FrameWriter();
    w.frame(0x51);
    expect(() => {
      new FrameCutter().push(Buffer.from(w.take()), (f) => parseCompactCommand(f));
    }).toThrow('compact frame: unknown command tag 0x51');
  });
});

describe('choosing the format at the handshake', () => {
  const handshake = (conf: unknown) => JSON.stringify({ pidDir: '/tmp', conf, context: {} });

  it('answers compact only when the conf offers it', () => {
    expect(offeredWire(handshake({ [WIRE_CONF_KEY]: [COMPACT_WIRE] }))).toBe(COMPACT_WIRE);
    expect(offeredWire(handshake({ [WIRE_CONF_KEY]: ['compact-9'] }))).toBeUndefined();
    expect(offeredWire(handshake({}))).toBeUndefined();
    expect(offeredWire(handshake(null))).toBeUndefined();
    expect(offeredWire('not json')).toBeUndefined();
  });

  it('says again, compact, what was said as JSON before the pid', () => {
    const { out, writes } = capture();
    replayJsonFrames('{"command":"log","msg":"early","level":3}\nend\n{"command":"error","msg":"bad"}\nend\n', out);
    const reader = new ProcessFrames();
    expect(writes.flatMap((w) => reader.push(w.bytes))).toEqual([
      { command: 'log', level: 3, msg: 'early' },
      { command: 'error', msg: 'bad' },
    ]);
  });
});
