/**
 * The HTTP/1.1 response reader of the raw transport (src/kinesis/httpResponse.ts): an answer reads the same
 * whatever chunks its bytes arrive in, with a Content-Length, chunked or close-delimited body; whether the
 * connection can be reused; and bytes that are not an answer give an HttpResponseError that says why, and
 * never leave the reader waiting forever once the connection ends.
 */
import fc from 'fast-check';
import {
  type HttpResponse,
  HttpResponseError,
  MAX_HEAD_BYTES,
  ResponseReader,
} from '../../../src/kinesis/httpResponse';

/** Feeds `bytes` in pieces cut at `cuts`; ends the connection if no answer came before. */
function read(bytes: Buffer, cuts: number[] = [], end = false): HttpResponse | undefined {
  const reader = new ResponseReader();
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...at, bytes.length]) {
    if (to <= from) continue;
    const answer = reader.push(bytes.subarray(from, to));
    if (answer) return answer;
    from = to;
  }
  return end ? reader.end() : undefined;
}

const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/);
const headerValue = fc.stringMatching(/^[!-~]([ -~]{0,30}[!-~])?$/);
/** Headers that do not frame the body or the connection. */
const plainHeaders = fc
  .uniqueArray(fc.tuple(token, headerValue), {
    selector: ([name]) => name.toLowerCase(),
    maxLength: 8,
  })
  .map((hs) =>
    hs.filter(
      ([name]) => !['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name.toLowerCase()),
    ),
  );
const statusCode = fc.integer({ min: 200, max: 599 }).filter((s) => s !== 204 && s !== 304);

const body = fc.uint8Array({ maxLength: 2_000 }).map((b) => Buffer.from(b));

/** A chunked encoding of `data`, cut at `sizes` (chunk extensions and trailers sometimes). */
function chunked(data: Buffer, sizes: number[], extension: boolean, trailers: boolean): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= data.length) break;
    const piece = data.subarray(at, at + size);
    at += piece.length;
    parts.push(Buffer.from(`${piece.length.toString(16)}${extension ? ';x=1' : ''}\r\n`), piece, Buffer.from('\r\n'));
  }
  if (at < data.length)
    parts.push(Buffer.from(`${(data.length - at).toString(16)}\r\n`), data.subarray(at), Buffer.from('\r\n'));
  parts.push(Buffer.from(`0\r\n${trailers ? 'x-trailer: 1\r\n' : ''}\r\n`));
  return Buffer.concat(parts);
}

function head(status: number, headers: [string, string][], reason = 'Whatever'): string {
  return `HTTP/1.1 ${status} ${reason}\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`;
}

const answer = fc.record({
  status: statusCode,
  headers: plainHeaders,
  body,
  framing: fc.constantFrom('length', 'chunked', 'close'),
  sizes: fc.array(fc.integer({ min: 1, max: 300 }), { maxLength: 10 }),
  extension: fc.boolean(),
  trailers: fc.boolean(),
  interim: fc.boolean(),
  cuts: fc.array(fc.nat(), { maxLength: 12 }),
});

describe('an answer reads the same whatever chunks it arrives in', () => {
  test('Content-Length, chunked and close-delimited bodies; headers in lower case; 1xx skipped', () => {
    fc.assert(
      fc.property(answer, (a) => {
        const framingHeader: [string, string][] =
          a.framing === 'length'
            ? [['Content-Length', String(a.body.length)]]
            : a.framing === 'chunked'
              ? [['Transfer-Encoding', 'chunked']]
              : [];
        const payload = a.framing === 'chunked' ? chunked(a.body, a.sizes, a.extension, a.trailers) : a.body;
        const bytes = Buffer.concat([
          Buffer.from(a.interim ? 'HTTP/1.1 100 Continue\r\n\r\n' : ''),
          Buffer.from(head(a.status, [...a.headers, ...framingHeader]), 'latin1'),
          payload,
        ]);
        const whole = read(bytes, [], a.framing === 'close');
        const split = read(bytes, a.cuts, a.framing === 'close');
        expect(split).toEqual(whole);
        expect(whole?.statusCode).toBe(a.status);
        expect(whole?.reason).toBe('Whatever');
        expect(Buffer.compare(whole!.body, a.body)).toBe(0);
        for (const [name, value] of a.headers) expect(whole?.headers[name.toLowerCase()]).toBe(value);
        expect(whole?.keepAlive).toBe(a.framing !== 'close');
        expect(whole?.trailing).toBe(0);
      }),
    );
  });

  test('a chunked answer waits for its last chunk and trailers, a sized one for its last byte', () => {
    const sized = Buffer.from(`${head(200, [['Content-Length', '5']])}hello`);
    expect(read(sized.subarray(0, sized.length - 1))).toBeUndefined();
    const bytes = Buffer.concat([
      Buffer.from(head(200, [['Transfer-Encoding', 'chunked']])),
      chunked(Buffer.from('hi'), [1], false, true),
    ]);
    expect(read(bytes.subarray(0, bytes.length - 2))).toBeUndefined();
    expect(read(bytes)?.body.toString()).toBe('hi');
  });

  test('no body for 204 and 304 whatever their headers; repeated headers joined', () => {
    expect(read(Buffer.from(head(204, [['Content-Length', '10']])))?.body.length).toBe(0);
    expect(read(Buffer.from(head(304, [])))?.body.length).toBe(0);
    expect(
      read(
        Buffer.from(
          head(200, [
            ['X-A', '1'],
            ['x-a', '2'],
            ['Content-Length', '0'],
          ]),
        ),
      )?.headers['x-a'],
    ).toBe('1, 2');
  });
});

describe('whether the connection carries the next request', () => {
  const keepAlive = (text: string) => read(Buffer.from(text))?.keepAlive;
  test('HTTP/1.1 unless Connection: close; HTTP/1.0 only with keep-alive', () => {
    expect(keepAlive('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n')).toBe(true);
    expect(keepAlive('HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n')).toBe(false);
    expect(keepAlive('HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n')).toBe(false);
    expect(keepAlive('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n')).toBe(false);
    expect(keepAlive('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n')).toBe(true);
  });

  test('chunked with a Content-Length too: read as chunked, not reused', () => {
    const bytes = Buffer.concat([
      Buffer.from(
        head(200, [
          ['Content-Length', '3'],
          ['Transfer-Encoding', 'chunked'],
        ]),
      ),
      chunked(Buffer.from('abcdef'), [2], false, false),
    ]);
    expect(read(bytes)).toMatchObject({ keepAlive: false, body: Buffer.from('abcdef') });
  });

  test('bytes after the answer are counted (the connection is out of step)', () => {
    expect(read(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP'))?.trailing).toBe(4);
  });
});

describe('bytes that are not an answer', () => {
  const refused = (text: string, message: RegExp) => {
    expect(() => read(Buffer.from(text, 'latin1'), [], true)).toThrow(HttpResponseError);
    expect(() => read(Buffer.from(text, 'latin1'), [], true)).toThrow(message);
  };

  test('each refusal says what was read', () => {
    refused('SSH-2.0-OpenSSH\r\n\r\n', /not an HTTP\/1.x status line: "SSH-2.0-OpenSSH"/);
    refused('HTTP/2 200\r\n\r\n', /not an HTTP\/1.x status line/);
    refused('HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', /a header line that is not `name: value`: "no colon here"/);
    refused('HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n', /not `name: value`/);
    refused('HTTP/1.1 200 OK\r\n folded: x\r\n\r\n', /not `name: value`/);
    refused('HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n', /content-length "12abc": not one decimal length/);
    refused('HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd', /content-length "3, 4"/);
    refused(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n',
      /transfer-encoding "gzip, chunked": only chunked is read/,
    );
    refused('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /a chunk-size line that is not one: "zz"/);
    refused('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX', /a chunk not ended by CRLF/);
    refused('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nab', /chunk-size line not ended by CRLF/);
    refused('HTTP/1.1 101 Switching Protocols\r\n\r\n', /switched protocols/);
    refused(
      'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc',
      /closed in the body of a 200 answer \(7 bytes missing\)/,
    );
    refused('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab', /chunked body unfinished/);
    refused('HTTP/1.1 200 OK\r\nContent-', /closed after 25 bytes, before the answer's headers ended/);
  });

  test('headers that never end are refused past the limit, not buffered without end', () => {
    const reader = new ResponseReader();
    reader.push(Buffer.from('HTTP/1.1 200 OK\r\n'));
    const line = Buffer.from(`x-filler: ${'a'.repeat(1000)}\r\n`);
    let error: unknown;
    try {
      for (let i = 0; i < 100; i += 1) reader.push(line);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HttpResponseError);
    expect(String(error)).toContain(`headers are over ${MAX_HEAD_BYTES} bytes`);
  });

  test('any bytes: an answer, a wait for more, or an HttpResponseError; at the end, never a wait', () => {
    const noise = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      // Near-answers: a valid answer with bytes changed.
      fc
        .tuple(body, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }))
        .map(([b, edits]) => {
          const bytes = Buffer.concat([
            Buffer.from(head(200, [['Transfer-Encoding', 'chunked']])),
            chunked(b, [7], true, true),
          ]);
          for (const [at, value] of edits) bytes[at % bytes.length] = value;
          return bytes;
        }),
    );
    fc.assert(
      fc.property(noise, fc.array(fc.nat(), { maxLength: 6 }), (bytes, cuts) => {
        try {
          const got = read(bytes, cuts, true);
          expect(got).toBeDefined();
        } catch (err) {
          expect(err).toBeInstanceOf(HttpResponseError);
        }
      }),
    );
  });
});
