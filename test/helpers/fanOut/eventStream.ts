/**
 * The `application/vnd.amazon.eventstream` framing, written out here so that the SDK's own parser is the
 * judge of it. One message:
 *
 *   total length (uint32) | headers length (uint32) | prelude CRC (CRC-32 of the 8 bytes before it)
 *   headers | payload | message CRC (CRC-32 of every byte before it)
 *
 * A header is: name length (uint8), name (UTF-8), value type (7 = string), value length (uint16), value.
 * Only string headers are written: every header Kinesis sends (`:message-type`, `:event-type`,
 * `:exception-type`, `:content-type`) is one.
 */
import * as zlib from 'node:zlib';

const PRELUDE_BYTES = 12;
const CRC_BYTES = 4;
const STRING_HEADER = 7;

/** Node has `zlib.crc32` from 20.15; before that (engines says >= 20) the table below is used. */
const crc32: (data: Uint8Array) => number = typeof zlib.crc32 === 'function' ? (data) => zlib.crc32(data) : tableCrc32;

let table: Uint32Array | undefined;
function tableCrc32(data: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of data) crc = table[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export { crc32 };

function encodeHeaders(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const nameBytes = Buffer.from(name, 'utf8');
    const valueBytes = Buffer.from(value, 'utf8');
    if (nameBytes.length > 255) throw new Error(`event-stream header name over 255 bytes: ${name}`);
    if (valueBytes.length > 32767) throw new Error(`event-stream header ${name} over 32767 bytes`);
    const head = Buffer.alloc(1 + nameBytes.length + 3);
    head.writeUInt8(nameBytes.length, 0);
    nameBytes.copy(head, 1);
    head.writeUInt8(STRING_HEADER, 1 + nameBytes.length);
    head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
    parts.push(head, valueBytes);
  }
  return Buffer.concat(parts);
}

/** One whole message: prelude, headers, payload and both checksums. */
export function encodeMessage(headers: Record<string, string>, payload: Buffer): Buffer {
  const headerBytes = encodeHeaders(headers);
  const total = PRELUDE_BYTES + headerBytes.length + payload.length + CRC_BYTES;
  const message = Buffer.alloc(total);
  message.writeUInt32BE(total, 0);
  message.writeUInt32BE(headerBytes.length, 4);
  message.writeUInt32BE(crc32(message.subarray(0, 8)), 8);
  headerBytes.copy(message, PRELUDE_BYTES);
  payload.copy(message, PRELUDE_BYTES + headerBytes.length);
  message.writeUInt32BE(crc32(message.subarray(0, total - CRC_BYTES)), total - CRC_BYTES);
  return message;
}

const JSON_CONTENT = 'application/json';

/** An event of the stream (`initial-response`, `SubscribeToShardEvent`) with a JSON body. */
export function eventMessage(eventType: string, body: unknown): Buffer {
  return encodeMessage(
    { ':message-type': 'event', ':event-type': eventType, ':content-type': JSON_CONTENT },
    Buffer.from(JSON.stringify(body), 'utf8'),
  );
}

/** A modeled error of the stream (`InternalFailureException`, `KMSThrottlingException`...): the stream ends after it. */
export function exceptionMessage(exceptionType: string, message: string): Buffer {
  return encodeMessage(
    { ':message-type': 'exception', ':exception-type': exceptionType, ':content-type': JSON_CONTENT },
    Buffer.from(JSON.stringify({ message }), 'utf8'),
  );
}

/** Ways to spoil a message on purpose, to show that the client checks what it is given. */
export type Corruption = 'preludeCrc' | 'messageCrc' | 'header';

export function corrupt(message: Buffer, how: Corruption): Buffer {
  const spoilt = Buffer.from(message);
  if (how === 'preludeCrc') spoilt[8] ^= 0xff;
  else if (how === 'messageCrc') spoilt[spoilt.length - 1] ^= 0xff;
  else {
    // The first header's value type becomes one that does not exist, with both checksums recomputed:
    // the frame is whole, its content is not.
    const nameLength = spoilt.readUInt8(PRELUDE_BYTES);
    spoilt.writeUInt8(0x2a, PRELUDE_BYTES + 1 + nameLength);
    spoilt.writeUInt32BE(crc32(spoilt.subarray(0, spoilt.length - CRC_BYTES)), spoilt.length - CRC_BYTES);
  }
  return spoilt;
}
