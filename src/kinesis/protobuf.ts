/** The protobuf wire format as far as KPL aggregates need it: a bounds-checked field reader that throws MalformedProtobuf. */

export class MalformedProtobuf extends Error {}

export const WireType = { Varint: 0, Fixed64: 1, Bytes: 2, Fixed32: 5 } as const;

/** Reads protobuf fields from a byte range; every read is bounds-checked. */
export class ProtoReader {
  private pos: number;

  constructor(
    private readonly bytes: Uint8Array,
    start = 0,
    private readonly end = bytes.length,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** Up to 64 bits; exact up to 2^53 (indexes beyond that cannot point into any table anyway). */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i += 1) {
      if (this.pos >= this.end) throw new MalformedProtobuf('truncated varint');
      const byte = this.bytes[this.pos++];
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    throw new MalformedProtobuf('varint longer than 10 bytes');
  }

  tag(): { field: number; wire: number } {
    const key = this.varint();
    const field = Math.floor(key / 8);
    if (field === 0) throw new MalformedProtobuf('field number 0');
    return { field, wire: key % 8 };
  }

  /** A length-delimited field's range: [start, end). */
  delimited(): { start: number; end: number } {
    const length = this.varint();
    if (length > this.end - this.pos) throw new MalformedProtobuf(`length ${length} past the end of its message`);
    const start = this.pos;
    this.pos += length;
    return { start, end: this.pos };
  }

  skip(wire: number): void {
    switch (wire) {
      case WireType.Varint:
        this.varint();
        return;
      case WireType.Fixed64:
        this.advance(8);
        return;
      case WireType.Bytes:
        this.delimited();
        return;
      case WireType.Fixed32:
        this.advance(4);
        return;
      default:
        throw new MalformedProtobuf(`unsupported wire type ${wire}`);
    }
  }

  private advance(n: number): void {
    if (n > this.end - this.pos) throw new MalformedProtobuf('truncated fixed-size field');
    this.pos += n;
  }
}

export function expectWire(actual: number, expected: number, what: string): void {
  if (actual !== expected) throw new MalformedProtobuf(`${what} has wire type ${actual}, expected ${expected}`);
}
