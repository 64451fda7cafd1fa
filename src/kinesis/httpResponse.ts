/**
 * An HTTP/1.1 response read from the bytes of a connection, as they arrive: the status line, the headers, a
 * body framed by Content-Length, by chunked transfer coding or by the connection's close. For the raw
 * transport (rawHttp.ts), which sends one request at a time on a connection and reads its one answer here.
 * Strict where a misread would desynchronize the connection (line endings, header names, framing headers),
 * and every refusal is an HttpResponseError saying what was read; 1xx interim answers are skipped.
 */

/** An answer read whole. Header names in lower case, a repeated header's values joined with `, `. */
export interface HttpResponse {
  statusCode: number;
  reason: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Whether the connection may carry the next request (no `Connection: close`, a body not read to the close). */
  keepAlive: boolean;
  /** Bytes that arrived after the answer (a request is never pipelined: the connection is out of step). */
  trailing: number;
}

/** Bytes that are not an HTTP/1.1 answer, or not one this reader reads. */
export class HttpResponseError extends Error {
  readonly code = 'ERR_KINESIS_SPOUT_HTTP_RESPONSE';
  constructor(message: string) {
    super(message);
    this.name = 'HttpResponseError';
  }
}

/** As Node's default `--max-http-header-size`: the status line and headers together. */
export const MAX_HEAD_BYTES = 16_384;
/** A chunk-size line (the size, and any chunk extensions). */
const MAX_CHUNK_LINE_BYTES = 1_024;
const CR = 13;
const LF = 10;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: ([^\r\n]*))?$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/;

type State =
  | { kind: 'head' }
  | { kind: 'length'; remaining: number }
  | { kind: 'chunkSize' }
  | { kind: 'chunkData'; remaining: number }
  | { kind: 'chunkEnd' }
  | { kind: 'trailers'; bytes: number }
  | { kind: 'close' }
  | { kind: 'done' };

interface Head {
  statusCode: number;
  reason: string;
  headers: Record<string, string>;
  keepAlive: boolean;
}

/** Reads one answer: `push` each chunk received until it returns the answer; `end` when the connection ends. */
export class ResponseReader {
  private state: State = { kind: 'head' };
  /** Received and not yet consumed (a line not yet whole). */
  private rest: Buffer = Buffer.alloc(0);
  private head: Head | undefined;
  private readonly parts: Buffer[] = [];
  private received = 0;

  /** Whether any byte of an answer has arrived (a connection closed before that is a hang-up, not a bad answer). */
  get started(): boolean {
    return this.received > 0;
  }

  /** The answer's status and headers, once read (a body cut off can still be reported with them). */
  get status(): Head | undefined {
    return this.head;
  }

  /** The answer once the chunk completes it; throws HttpResponseError on bytes that are not one. */
  push(chunk: Buffer): HttpResponse | undefined {
    this.received += chunk.length;
    if (this.state.kind === 'done') {
      throw new HttpResponseError(`${chunk.length} bytes arrived after the answer was complete`);
    }
    this.rest = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    return this.advance();
  }

  /** The connection ended: the answer if its body runs to the close, else an HttpResponseError saying where it was cut. */
  end(): HttpResponse {
    if (this.state.kind === 'close') {
      this.state = { kind: 'done' };
      return this.answer(0);
    }
    throw new HttpResponseError(
      this.head
        ? `the connection closed in the body of a ${this.head.statusCode} answer (${this.state.kind === 'length' ? `${this.state.remaining} bytes missing` : 'chunked body unfinished'})`
        : `the connection closed after ${this.received} bytes, before the answer's headers ended`,
    );
  }

  private advance(): HttpResponse | undefined {
    for (;;) {
      const state = this.state;
      switch (state.kind) {
        case 'head': {
          const end = this.rest.indexOf('\r\n\r\n', 0, 'latin1');
          if (end < 0) {
            if (this.rest.length > MAX_HEAD_BYTES)
              throw new HttpResponseError(`the answer's headers are over ${MAX_HEAD_BYTES} bytes`);
            return undefined;
          }
          if (end + 4 > MAX_HEAD_BYTES)
            throw new HttpResponseError(`the answer's headers are over ${MAX_HEAD_BYTES} bytes`);
          const head = parseHead(this.rest.toString('latin1', 0, end));
          this.rest = this.rest.subarray(end + 4);
          if (head.statusCode < 200) {
            if (head.statusCode === 101) throw new HttpResponseError('a 101 answer: the server switched protocols');
            continue; // an interim answer (100 Continue, 103 Early Hints): the real one follows
          }
          this.head = head;
          this.state = framing(head);
          if (this.state.kind === 'close') head.keepAlive = false;
          break;
        }
        case 'length': {
          if (!this.body(state)) return undefined;
          this.state = { kind: 'done' };
          break;
        }
        case 'chunkSize': {
          const line = this.line(MAX_CHUNK_LINE_BYTES, 'chunk-size line');
          if (line === undefined) return undefined;
          const size = CHUNK_SIZE.exec(line);
          if (!size)
            throw new HttpResponseError(`a chunk-size line that is not one: ${JSON.stringify(line.slice(0, 40))}`);
          const remaining = Number.parseInt(size[1], 16);
          this.state = remaining === 0 ? { kind: 'trailers', bytes: 0 } : { kind: 'chunkData', remaining };
          break;
        }
        case 'chunkData': {
          if (!this.body(state)) return undefined;
          this.state = { kind: 'chunkEnd' };
          break;
        }
        case 'chunkEnd': {
          if (this.rest.length < 2) {
            if (this.rest.length === 1 && this.rest[0] !== CR) throw new HttpResponseError('a chunk not ended by CRLF');
            return undefined;
          }
          if (this.rest[0] !== CR || this.rest[1] !== LF) throw new HttpResponseError('a chunk not ended by CRLF');
          this.rest = this.rest.subarray(2);
          this.state = { kind: 'chunkSize' };
          break;
        }
        case 'trailers': {
          const line = this.line(MAX_HEAD_BYTES - state.bytes, 'trailer section');
          if (line === undefined) return undefined;
          state.bytes += line.length + 2;
          if (line !== '') {
            // Trailer fields are read and left out of the headers, as the SDK's handler leaves them.
            const colon = line.indexOf(':');
            if (colon <= 0 || !TOKEN.test(line.slice(0, colon)))
              throw new HttpResponseError(`a trailer line that is not a header: ${JSON.stringify(line.slice(0, 40))}`);
            break;
          }
          this.state = { kind: 'done' };
          break;
        }
        case 'close': {
          if (this.rest.length > 0) this.parts.push(this.rest);
          this.rest = Buffer.alloc(0);
          return undefined;
        }
        case 'done':
          return this.answer(this.rest.length);
      }
    }
  }

  /** The next CRLF-ended line (consumed), or undefined until it is whole; at most `max` bytes. */
  /** Takes what has arrived of the `remaining` body bytes; whether they are all in. */
  private body(state: { remaining: number }): boolean {
    const n = Math.min(state.remaining, this.rest.length);
    if (n > 0) {
      this.parts.push(this.rest.subarray(0, n));
      this.rest = this.rest.subarray(n);
      state.remaining -= n;
    }
    return state.remaining === 0;
  }

  private line(max: number, what: string): string | undefined {
    const end = this.rest.indexOf(LF);
    if (end < 0) {
      if (this.rest.length > max) throw new HttpResponseError(`a ${what} over ${max} bytes`);
      return undefined;
    }
    if (end === 0 || this.rest[end - 1] !== CR) throw new HttpResponseError(`a ${what} not ended by CRLF`);
    if (end + 1 > max) throw new HttpResponseError(`a ${what} over ${max} bytes`);
    const text = this.rest.toString('latin1', 0, end - 1);
    this.rest = this.rest.subarray(end + 1);
    return text;
  }

  private answer(trailing: number): HttpResponse {
    const head = this.head as Head;
    const body = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
    return { ...head, body, trailing };
  }
}

function parseHead(text: string): Head {
  const lines = text.split('\r\n');
  const status = STATUS_LINE.exec(lines[0]);
  if (!status) throw new HttpResponseError(`not an HTTP/1.x status line: ${JSON.stringify(lines[0].slice(0, 60))}`);
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i];
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!TOKEN.test(name))
      throw new HttpResponseError(`a header line that is not \`name: value\`: ${JSON.stringify(line.slice(0, 60))}`);
    const key = name.toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (/[\r\n\0]/.test(value)) throw new HttpResponseError(`header ${key}'s value holds a control character`);
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
  }
  const http10 = status[1] === '0';
  const connection = (headers.connection ?? '').toLowerCase();
  const keepAlive = http10
    ? /(?:^|,)\s*keep-alive\s*(?:,|$)/.test(connection)
    : !/(?:^|,)\s*close\s*(?:,|$)/.test(connection);
  return { statusCode: Number(status[2]), reason: status[3] ?? '', headers, keepAlive };
}

/** How the body is delimited (RFC 9112, 6.3). */
function framing(head: Head): State {
  const { statusCode, headers } = head;
  if (statusCode === 204 || statusCode === 304) return { kind: 'done' };
  const te = headers['transfer-encoding'];
  if (te !== undefined) {
    const codings = te.split(',').map((c) => c.trim().toLowerCase());
    if (codings.length !== 1 || codings[0] !== 'chunked')
      throw new HttpResponseError(`transfer-encoding ${JSON.stringify(te)}: only chunked is read`);
    // With both, the length is ignored and the connection not reused (RFC 9112, 6.3).
    if (headers['content-length'] !== undefined) head.keepAlive = false;
    return { kind: 'chunkSize' };
  }
  const length = headers['content-length'];
  if (length === undefined) return { kind: 'close' };
  const values = length.split(',').map((v) => v.trim());
  if (!values.every((v) => /^\d{1,15}$/.test(v) && v === values[0]))
    throw new HttpResponseError(`content-length ${JSON.stringify(length)}: not one decimal length`);
  const remaining = Number(values[0]);
  return remaining === 0 ? { kind: 'done' } : { kind: 'length', remaining };
}
