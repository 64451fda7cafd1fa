import fc from 'fast-check';
import { FrameDecoder } from '../../../src/multilang/frames';
import {
  FRAMES_KEPT_BEFORE_PID,
  parseCommand,
  parseHandshake,
  StormOutput,
  taskPosition,
} from '../../../src/multilang/protocol';

/** Feeds `text` cut at `cuts` (positions, any order, repeats allowed); calls `after` with what came out after each piece. */
function feedSplit(
  decoder: FrameDecoder,
  text: string,
  cuts: number[],
  after: (got: string[], at: number) => void = () => undefined,
): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const got: string[] = [];
  let last = 0;
  for (const p of [...points, text.length]) {
    got.push(...decoder.push(text.slice(last, p)));
    last = p;
    after(got, p);
  }
  return got;
}

describe('FrameDecoder', () => {
  it('decodes the same frames however the input is split', () => {
    const frame = fc.jsonValue().map((v) => JSON.stringify(v));
    fc.assert(
      fc.property(
        fc.array(frame, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (frames, cuts) => {
          const text = frames.map((f) => `${f}\nend\n`).join('');
          const decoder = new FrameDecoder();
          expect(feedSplit(decoder, text, cuts)).toEqual(frames);
          expect(decoder.hasPartialFrame()).toBe(false);
        },
      ),
    );
  });

  it('decodes any frames, multi-line or not, ended by `end` or `end\\r`, split anywhere, and knows when one is unfinished', () => {
    const char = fc.constantFrom('a', 'e', 'n', 'd', '{', '"', ' ', '\r', '\n', 'é', '😀');
    const body = fc
      .string({ unit: char, maxLength: 40 })
      .filter((b) => b.split('\n').every((line) => line !== 'end' && line !== 'end\r'));
    const frame = fc.record({ body, terminator: fc.constantFrom('\nend\n', '\nend\r\n') });
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 10 }), fc.array(fc.nat(), { maxLength: 20 }), (frames, cuts) => {
        const texts = frames.map((f) => f.body + f.terminator);
        const text = texts.join('');
        const ends: number[] = [];
        let at = 0;
        for (const t of texts) {
          at += t.length;
          ends.push(at);
        }
        const decoder = new FrameDecoder();
        const got = feedSplit(decoder, text, cuts, (_, p) => {
          // What is unfinished: the text after the last complete frame, unless it is blank lines only.
          const rest = text.slice(Math.max(0, ...ends.filter((e) => e <= p)), p).split('\n');
          const unfinished = rest.pop()!.length > 0 || rest.some((line) => line.trim() !== '');
          expect(decoder.hasPartialFrame()).toBe(unfinished);
        });
        expect(got).toEqual(frames.map((f) => f.body));
        expect(decoder.scannedChars).toBe(text.length);
      }),
    );
  });

  it('decodes a 16 MiB frame fed in 64 KiB chunks searching each character once (no rescans of what is pending)', () => {
    const body = `{"command":"ack","id":"${'x'.repeat(16 * 2 ** 20)}"}`;
    const text = `${body}\nend\n`;
    const decoder = new FrameDecoder();
    const got: string[] = [];
    for (let at = 0; at < text.length; at += 64 * 2 ** 10) got.push(...decoder.push(text.slice(at, at + 64 * 2 ** 10)));
    expect(got).toHaveLength(1);
    expect(got[0] === body).toBe(true);
    expect(decoder.scannedChars).toBe(text.length);
    expect(decoder.hasPartialFrame()).toBe(false);
  });

  it('joins a frame spread over several lines', () => {
    expect(new FrameDecoder().push('{"a":\n1}\nend\n')).toEqual(['{"a":\n1}']);
  });

  it('reports a truncated frame', () => {
    const decoder = new FrameDecoder();
    expect(decoder.push('{"command":"ne')).toEqual([]);
    expect(decoder.hasPartialFrame()).toBe(true);
  });
});

describe('protocol', () => {
  const context = {
    taskid: 7,
    componentid: 'kinesis',
    'task->component': { '3': 'kinesis', '10': 'kinesis', '7': 'kinesis', '1': 'bolt' },
  };

  it('computes the task index from numerically sorted task ids of the component', () => {
    expect(taskPosition(context)).toEqual({ index: 1, count: 3 });
    expect(taskPosition({ ...context, taskid: 10 })).toEqual({ index: 2, count: 3 });
  });

  it('rejects a task that is not in its component', () => {
    expect(() => taskPosition({ ...context, taskid: 1 })).toThrow(/not a task of component/);
  });

  it('parses commands and rejects bad frames with a BAD_FRAME error', () => {
    expect(parseCommand('{"command":"ack","id":"s:1"}')).toEqual({ command: 'ack', id: 's:1' });
    expect(parseCommand('{"command":"next"}')).toEqual({ command: 'next' });
    expect(() => parseCommand('{"command":"explode"}')).toThrow(/unknown command/);
    expect(() => parseCommand('not json')).toThrow(expect.objectContaining({ code: 'BAD_FRAME' }));
    expect(() => parseHandshake('{"conf":{}}')).toThrow(/pidDir/);
  });

  it('reads ack and fail frames as JSON.parse would, in either key order, whatever the id', () => {
    const general = (body: string) => {
      const value = JSON.parse(body) as { command: string; id: unknown };
      return { command: value.command, id: value.id };
    };
    const id = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }),
      fc.constantFrom(
        'shardId-000000000000:49680692276380000000000000001',
        '',
        '\u0000',
        '\t',
        'a\\b',
        '"',
        'é',
        '\u2028',
      ),
      fc.integer(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.constantFrom('ack', 'fail'), id, fc.boolean(), (command, value, idFirst) => {
        const body = idFirst
          ? `{"id":${JSON.stringify(value)},"command":"${command}"}`
          : `{"command":"${command}","id":${JSON.stringify(value)}}`;
        expect(parseCommand(body)).toEqual(general(body));
      }),
    );
    // As ShellSpout writes next: an empty id first.
    expect(parseCommand('{"id":"","command":"next"}')).toEqual({ command: 'next' });
    // Near misses go the general way and are judged there.
    expect(parseCommand('{"id":"a\\"b","command":"ack"}')).toEqual({ command: 'ack', id: 'a"b' });
    expect(() => parseCommand('{"id":"a","command":"ack"')).toThrow(expect.objectContaining({ code: 'BAD_FRAME' }));
    expect(() => parseCommand('{"id":"a\u0001","command":"ack"}')).toThrow(
      expect.objectContaining({ code: 'BAD_FRAME' }),
    );
  });

  it('writes single-line frames, never a task key, need_task_ids false, one write per command', () => {
    const writes: string[] = [];
    const out = new StormOutput((t) => writes.push(t));
    out.pid(7);
    writes.length = 0;
    out.beginCommand();
    out.emit('s:1', ['k', 'line1\nline2', 's', '1', 5], 'default');
    out.emit('s:2', ['k'], 'other');
    out.log('hi\nthere', 3);
    expect(writes).toEqual([]);
    out.sync();
    expect(writes).toHaveLength(1);
    const frames = writes[0]
      .split('\nend\n')
      .filter(Boolean)
      .map((f) => JSON.parse(f));
    expect(writes[0].split('\n').filter((l) => l !== 'end' && l !== '')).toHaveLength(4);
    expect(frames[0]).toEqual({
      command: 'emit',
      id: 's:1',
      tuple: ['k', 'line1\nline2', 's', '1', 5],
      need_task_ids: false,
    });
    expect(frames[1].stream).toBe('other');
    expect(frames.some((f) => 'task' in f)).toBe(false);
    expect(frames[3]).toEqual({ command: 'sync' });
  });

  it('writes an unanchored emit without an id, on its stream, in reply to the command', () => {
    const writes: string[] = [];
    const out = new StormOutput((t) => writes.push(t));
    out.pid(7);
    writes.length = 0;
    out.beginCommand();
    out.emitUnanchored(['k', 3, 1_700_000_000_000], 'deadLetter');
    expect(writes).toEqual([]);
    out.sync();
    const frames = writes[0]
      .split('\nend\n')
      .filter(Boolean)
      .map((f) => JSON.parse(f));
    expect(frames).toEqual([
      { command: 'emit', tuple: ['k', 3, 1_700_000_000_000], stream: 'deadLetter', need_task_ids: false },
      { command: 'sync' },
    ]);
  });

  it('writes an emit without an id (delivery without tuple tracking) as a frame with no id key', () => {
    const writes: string[] = [];
    const out = new StormOutput((t) => writes.push(t));
    out.pid(7);
    writes.length = 0;
    out.beginCommand();
    out.emit(undefined, ['k', 'd'], 'default');
    out.sync();
    const frames = writes[0]
      .split('\nend\n')
      .filter(Boolean)
      .map((f) => JSON.parse(f));
    expect(frames).toEqual([{ command: 'emit', tuple: ['k', 'd'], need_task_ids: false }, { command: 'sync' }]);
  });

  it('writes a log at once outside a command', () => {
    const writes: string[] = [];
    const out = new StormOutput((t) => writes.push(t));
    out.pid(7);
    out.log('background', 2);
    expect(writes).toEqual(['{"pid":7}\nend\n', '{"command":"log","msg":"background","level":2}\nend\n']);
  });

  it('writes nothing before the pid: what was said waits, in order, behind it (a bounded number of frames)', () => {
    const writes: string[] = [];
    const out = new StormOutput((t) => writes.push(t));
    out.log('node warning: agent loaded', 1);
    out.error('crashed before the handshake');
    expect(writes).toEqual([]);
    out.pid(42);
    const frames = writes
      .join('')
      .split('\nend\n')
      .filter(Boolean)
      .map((f) => JSON.parse(f));
    expect(frames).toEqual([
      { pid: 42 },
      { command: 'log', msg: 'node warning: agent loaded', level: 1 },
      { command: 'error', msg: 'crashed before the handshake' },
    ]);

    const flood: string[] = [];
    const flooded = new StormOutput((t) => flood.push(t));
    for (let i = 0; i < FRAMES_KEPT_BEFORE_PID + 5; i += 1) flooded.log(`warning ${i}`);
    flooded.pid(1);
    const said = flood
      .join('')
      .split('\nend\n')
      .filter(Boolean)
      .map((f) => JSON.parse(f));
    expect(said[0]).toEqual({ pid: 1 });
    expect(said).toHaveLength(FRAMES_KEPT_BEFORE_PID + 2);
    expect(said[said.length - 1]).toEqual({
      command: 'log',
      msg: '5 more frames said before the handshake were dropped',
      level: 3,
    });
  });
});
