/**
 * The compact wire format ("compact-2"), spoken after the handshake when the Java side's
 * `CompactSerializer` offers it (docs/design.md, "The compact wire format"). Each frame is a tag byte
 * (printable ASCII, never 0), the body's length (u32, big-endian) and the body. Values are typed: a type
 * byte, then its payload. Storm's side escapes every NUL out of what it writes (nulEscape.ts), so the stdin
 * watchdog's wake-up bytes (stdio.ts) are dropped wherever they land.
 */
import { ErrorCode, SpoutError } from '../errors';

/** What the handshake's conf carries to offer the format, and what the pid's reply names to accept it. */
export const WIRE_CONF_KEY = 'kinesis.spout.wire';
export const COMPACT_WIRE = 'compact-2';

/** Frames Storm sends. Every one but `TaskIds` first carries acks (u32 count, then ids) deferred by Storm's side. */
export const CommandTag = {
  Next: 0x4e, // N
  Acks: 0x4b, // K: acks alone
  Fail: 0x46, // F: then the id failed
  Activate: 0x56, // V
  Deactivate: 0x44, // D
  TaskIds: 0x54, // T: u32 count, then i32 task ids (the reply to an emit that asked for them)
} as const;

/** Frames the process sends. */
export const ReplyTag = {
  Sync: 0x53, // S: empty body
  Emit: 0x45, // E: u8 flags (1 = need task ids), id value (null: unanchored), stream, i32 task (0: not direct), u32 count, values
  Log: 0x4c, // L: u8 level, text
  Error: 0x52, // R: text
  Metrics: 0x4d, // M: name, params value
} as const;

/** Value types. Integers in int32 become Java Integers, larger ones Longs, as Storm's JSON parser gives them. */
export const ValueType = {
  Null: 0x6e, // n
  False: 0x66, // f
  True: 0x74, // t
  Int32: 0x69, // i: 4 bytes
  Int64: 0x6c, // l: 8 bytes
  Float64: 0x64, // d: 8 bytes
  String: 0x73, // s: u32 length, UTF-8
  Bytes: 0x62, // b: u32 length, raw (a Java byte[])
  Json: 0x6a, // j: u32 length, UTF-8 JSON text of an object or array (parsed by Storm's JSON parser)
} as const;

export const FRAME_HEADER_BYTES = 5;
/** A longer body is a sign of a corrupt stream, not a frame. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Appends frames to a buffer kept between replies. */
export class FrameWriter {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private pos = 0;
  private frameStart = -1;

  get length(): number {
    return this.pos;
  }

  /** The bytes written since the last take (a view: valid until the next write). */
  take(): Buffer {
    const out = this.buf.subarray(0, this.pos);
    this.pos = 0;
    return out;
  }

  begin(tag: number): void {
    this.ensure(FRAME_HEADER_BYTES);
    this.frameStart = this.pos;
    this.buf[this.pos] = tag;
    this.pos += FRAME_HEADER_BYTES;
  }

  end(): void {
    this.buf.writeUInt32BE(this.pos - this.frameStart - FRAME_HEADER_BYTES, this.frameStart + 1);
    this.frameStart = -1;
  }

  /** An empty frame. */
  frame(tag: number): void {
    this.ensure(FRAME_HEADER_BYTES);
    this.buf[this.pos] = tag;
    this.buf.writeUInt32BE(0, this.pos + 1);
    this.pos += FRAME_HEADER_BYTES;
  }

  u8(value: number): void {
    this.ensure(1);
    this.buf[this.pos++] = value;
  }

  u32(value: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(value, this.pos);
    this.pos += 4;
  }

  i32(value: number): void {
    this.ensure(4);
    this.buf.writeInt32BE(value, this.pos);
    this.pos += 4;
  }

  /** u32 byte length, then the UTF-8 text. */
  text(value: string): void {
    this.ensure(4 + value.length * 3);
    const size = this.buf.write(value, this.pos + 4, 'utf8');
    this.buf.writeUInt32BE(size, this.pos);
    this.pos += 4 + size;
  }

  value(value: unknown): void {
    switch (typeof value) {
      case 'string':
        this.u8(ValueType.String);
        return this.text(value);
      case 'number':
        return this.number(value);
      case 'boolean':
        return this.u8(value ? ValueType.True : ValueType.False);
      case 'bigint':
        if (value >= -(2n ** 63n) && value < 2n ** 63n) {
          this.u8(ValueType.Int64);
          this.ensure(8);
          this.buf.writeBigInt64BE(value, this.pos);
          this.pos += 8;
          return;
        }
        this.u8(ValueType.String);
        return this.text(value.toString());
      case 'undefined':
        return this.u8(ValueType.Null);
      default:
        if (value === null) return this.u8(ValueType.Null);
        if (value instanceof Uint8Array) {
          this.u8(ValueType.Bytes);
          this.u32(value.byteLength);
          this.ensure(value.byteLength);
          this.buf.set(value, this.pos);
          this.pos += value.byteLength;
          return;
        }
        // Objects and arrays as JSON text: Storm's side parses them as its JSON serializer would.
        this.u8(ValueType.Json);
        return this.text(JSON.stringify(value) ?? 'null');
    }
  }

  private number(value: number): void {
    if (Number.isInteger(value)) {
      if (value >= -0x80000000 && value <= 0x7fffffff) {
        this.u8(ValueType.Int32);
        return this.i32(value);
      }
      if (Number.isSafeInteger(value)) {
        this.u8(ValueType.Int64);
        this.ensure(8);
        this.buf.writeBigInt64BE(BigInt(value), this.pos);
        this.pos += 8;
        return;
      }
    }
    // JSON has no NaN or infinities: null, as JSON.stringify gives.
    if (!Number.isFinite(value)) return this.u8(ValueType.Null);
    this.u8(ValueType.Float64);
    this.ensure(8);
    this.buf.writeDoubleBE(value, this.pos);
    this.pos += 8;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

/** Reads the values of one frame's body. Throws BadFrame when the body ends early or a type is unknown. */
export class BodyReader {
  pos: number;

  constructor(
    private readonly buf: Buffer,
    start: number,
    private readonly end: number,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos === this.end;
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  i32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  text(): string {
    const size = this.u32();
    this.need(size);
    const s = this.buf.toString('utf8', this.pos, this.pos + size);
    this.pos += size;
    return s;
  }

  value(): unknown {
    const type = this.u8();
    switch (type) {
      case ValueType.Null:
        return null;
      case ValueType.False:
        return false;
      case ValueType.True:
        return true;
      case ValueType.Int32:
        return this.i32();
      case ValueType.Int64: {
        this.need(8);
        const v = this.buf.readBigInt64BE(this.pos);
        this.pos += 8;
        return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
      }
      case ValueType.Float64: {
        this.need(8);
        const v = this.buf.readDoubleBE(this.pos);
        this.pos += 8;
        return v;
      }
      case ValueType.String:
        return this.text();
      case ValueType.Bytes: {
        const size = this.u32();
        this.need(size);
        const bytes = Buffer.from(this.buf.subarray(this.pos, this.pos + size));
        this.pos += size;
        return bytes;
      }
      case ValueType.Json: {
        const text = this.text();
        try {
          return JSON.parse(text);
        } catch (err) {
          throw new SpoutError(
            ErrorCode.BadFrame,
            `compact frame: a JSON value does not parse: ${text.slice(0, 200)}`,
            {
              cause: err,
            },
          );
        }
      }
      default:
        throw new SpoutError(
          ErrorCode.BadFrame,
          `compact frame: unknown value type 0x${hex(type)} at byte ${this.pos - 1}`,
        );
    }
  }

  private need(bytes: number): void {
    if (this.pos + bytes > this.end)
      throw new SpoutError(ErrorCode.BadFrame, `compact frame: body ends ${this.pos + bytes - this.end} bytes early`);
  }
}

export function hex(byte: number): string {
  return byte.toString(16).padStart(2, '0');
}

/** One whole frame cut from a stream: its tag and its body's bounds in `buf`. */
export interface RawFrame {
  tag: number;
  buf: Buffer;
  start: number;
  end: number;
}

/**
 * Cuts a byte stream into frames, in any pieces. A header whose length is over MAX_BODY_BYTES, or a tag
 * that is not printable ASCII, means the stream cannot be cut any more: `push` throws BadFrame and every
 * later push throws too (nothing after it could be trusted).
 */
export class FrameCutter {
  private pending: Buffer | undefined;
  private broken: SpoutError | undefined;

  /** Frames completed by `chunk` (which may be reused by the caller after this returns: frames are copied out). */
  push(chunk: Buffer, onFrame: (frame: RawFrame) => void): void {
    if (this.broken) throw this.broken;
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    let pos = 0;
    const copied = buf !== chunk;
    for (;;) {
      if (buf.length - pos < FRAME_HEADER_BYTES) break;
      const tag = buf[pos];
      const size = buf.readUInt32BE(pos + 1);
      if (tag < 0x21 || tag > 0x7e || size > MAX_BODY_BYTES) {
        this.broken = new SpoutError(
          ErrorCode.BadFrame,
          `compact frame: the stream cannot be read on (tag 0x${hex(tag)}, body length ${size}); bytes: ${buf.toString('hex', pos, Math.min(buf.length, pos + 32))}`,
        );
        throw this.broken;
      }
      const end = pos + FRAME_HEADER_BYTES + size;
      if (end > buf.length) break;
      onFrame({ tag, buf, start: pos + FRAME_HEADER_BYTES, end });
      pos = end;
    }
    if (pos < buf.length) this.pending = copied && pos === 0 ? buf : Buffer.from(buf.subarray(pos));
  }

  /** True when bytes of an unfinished frame are held. */
  hasPartialFrame(): boolean {
    return this.pending !== undefined;
  }
}
