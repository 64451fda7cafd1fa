/**
 * HTTP/1.1 requests written straight to keep-alive sockets, for the lean GetRecords path (leanGetRecords.ts):
 * Node's `http.request` costs more CPU per call than signing, sending and parsing together (its request and
 * response objects, its parser's callbacks, the agent's bookkeeping), and a GetRecords of an idle shard,
 * made once a second per shard, is little else. Here a request is one string written to a socket of a
 * bounded pool, and its answer is read by httpResponse.ts.
 *
 * - One pool per scheme and host: at most `maxSockets` connections, a request waiting its turn beyond that;
 *   an idle socket is reused last-in first-out, kept while fewer than `maxFreeSockets` are idle, and closed
 *   after `idleTimeoutMs` idle (or a second before the server's `Keep-Alive: timeout=`).
 * - https: `tls.connect` with SNI and Node's default certificate checks.
 * - A socket is reused only after an answer read whole, without `Connection: close`, with nothing after it;
 *   anything else (a read cut off, bytes that are not an answer, an abort, a byte while idle) closes it.
 * - Failures are what the SDK's handler (`@smithy/node-http-handler`) gives for the same: a connection not
 *   made within `connectionTimeoutMs` and a reset, broken pipe or TCP timeout are TimeoutErrors, an abort an
 *   AbortError; an answer whose status and headers were read but whose body was cut off is an answer whose
 *   body is the error, as the SDK's deserializer meets it.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { type HttpResponse, HttpResponseError, ResponseReader } from './httpResponse';

export interface RawTarget {
  protocol: 'http:' | 'https:';
  /** An address or a name (an IPv6 address without brackets). */
  hostname: string;
  port: number | undefined;
}

export interface RawPoolOptions {
  /** Connections open at once per host. */
  maxSockets: number;
  /** Idle connections kept per host. */
  maxFreeSockets: number;
  /** An idle connection is closed after this. */
  idleTimeoutMs: number;
  /** A new connection not made by then fails the request with a TimeoutError (the shared handler's). */
  connectionTimeoutMs: number;
  /** Certificates trusted for https instead of Node's default ones (tests); absent, Node's defaults. */
  ca?: string | Buffer;
}

/** An answer as the SDK's handler hands it on: its body, or the error that cut the body off. */
export interface RawAnswer {
  statusCode: number;
  reason: string | undefined;
  headers: Record<string, string>;
  body: Buffer | Error;
}

/** What Node's `http.request` refuses in a header value (its `checkInvalidHeaderChar`). */
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * A request as written on the wire, in one string: the request line, `headers` in their order, the body.
 * Throws as Node's `http.request` does on a header that would split the request (a line break in a value).
 */
export function requestText(method: string, path: string, headers: Record<string, string>, body: string): string {
  let text = `${method} ${path} HTTP/1.1\r\n`;
  for (const name in headers) {
    const value = headers[name];
    if (!HEADER_NAME.test(name))
      throw Object.assign(new TypeError(`Header name must be a valid HTTP token ["${name}"]`), {
        code: 'ERR_INVALID_HTTP_TOKEN',
      });
    if (INVALID_HEADER_CHAR.test(value))
      throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), {
        code: 'ERR_INVALID_CHAR',
      });
    text += `${name}: ${value}\r\n`;
  }
  return `${text}\r\n${body}`;
}

/** The SDK's handler calls these timeouts (a reset, a broken pipe, a TCP timeout). */
const TIMEOUT_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
const SWEEP_MS = 1_000;
/** Node's agent closes a socket this long before the server's keep-alive timeout says the server will. */
const KEEP_ALIVE_MARGIN_MS = 1_000;

export function abortError(signal: AbortSignal): Error {
  // As the SDK's handler builds it.
  const reason: unknown = signal.reason;
  const error = new Error(reason && !(reason instanceof Error) ? String(reason) : 'Request aborted');
  error.name = 'AbortError';
  if (reason instanceof Error) error.cause = reason;
  return error;
}

/** A socket error as the SDK's handler rejects with it. */
function asHandlerError(err: NodeJS.ErrnoException): Error {
  return err.code && TIMEOUT_CODES.has(err.code) ? Object.assign(err, { name: 'TimeoutError' }) : err;
}

function hangUp(): Error {
  return asHandlerError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
}

interface Pending {
  reader: ResponseReader;
  resolve: (answer: RawAnswer) => void;
  reject: (err: unknown) => void;
}

class Connection {
  pending: Pending | undefined;
  idleSince = 0;
  /** How long it may stay idle: the pool's, or less if the server said so. */
  idleLimitMs: number;
  closed = false;

  constructor(
    readonly socket: Socket,
    private readonly host: HostPool,
    idleLimitMs: number,
  ) {
    this.idleLimitMs = idleLimitMs;
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.onEnd());
    socket.on('error', (err) => this.fail(asHandlerError(err)));
    socket.on('close', () => this.fail(hangUp()));
  }

  send(request: string, pending: Pending): void {
    this.pending = pending;
    this.socket.ref();
    this.socket.write(request);
  }

  private onData(chunk: Buffer): void {
    const pending = this.pending;
    if (!pending) {
      // Nothing was asked: the connection is out of step.
      this.close();
      return;
    }
    let answer: HttpResponse | undefined;
    try {
      answer = pending.reader.push(chunk);
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    if (!answer) return;
    this.pending = undefined;
    const hint = /(?:^|,)\s*timeout=(\d+)/i.exec(answer.headers['keep-alive'] ?? '');
    if (hint) this.idleLimitMs = Math.min(this.idleLimitMs, Number(hint[1]) * 1000 - KEEP_ALIVE_MARGIN_MS);
    const reusable = answer.keepAlive && answer.trailing === 0 && this.idleLimitMs > 0;
    pending.resolve(answer);
    if (reusable) this.host.release(this);
    else this.close();
  }

  private onEnd(): void {
    const pending = this.pending;
    if (pending?.reader.started) {
      this.pending = undefined;
      try {
        pending.resolve(pending.reader.end());
      } catch (err) {
        this.settleFailed(pending, err as Error);
      }
    }
    this.close();
  }

  /** The request in flight fails with `err` (or its body does, once its headers were read); the socket is closed. */
  fail(err: Error): void {
    const pending = this.pending;
    this.pending = undefined;
    if (pending) this.settleFailed(pending, err);
    this.close();
  }

  private settleFailed(pending: Pending, err: Error): void {
    const head = pending.reader.status;
    if (head) pending.resolve({ statusCode: head.statusCode, reason: head.reason, headers: head.headers, body: err });
    else pending.reject(err);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.host.closed(this);
  }
}

interface Waiter {
  take: (connection: Connection) => void;
  reject: (err: unknown) => void;
}

class HostPool {
  /** Idle, the most recently used last. */
  readonly free: Connection[] = [];
  private open = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly target: RawTarget,
    private readonly options: RawPoolOptions,
    private readonly idle: () => void,
  ) {}

  request(request: string, signal: AbortSignal | undefined): Promise<RawAnswer> {
    return new Promise<RawAnswer>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      let connection: Connection | undefined;
      let waiter: Waiter | undefined;
      let settled = false;
      const onAbort = () => {
        if (settled) return;
        settled = true;
        if (waiter) this.forget(waiter);
        if (connection) {
          connection.pending = undefined;
          connection.close();
        }
        reject(abortError(signal as AbortSignal));
      };
      const pending: Pending = {
        reader: new ResponseReader(),
        resolve: (answer) => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener('abort', onAbort);
          resolve(answer);
        },
        reject: (err) => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const start = (c: Connection) => {
        waiter = undefined;
        // Aborted while its connection was being made: the connection serves the next request.
        if (settled) {
          this.release(c);
          return;
        }
        connection = c;
        c.send(request, pending);
      };
      const reused = this.takeFree();
      if (reused) start(reused);
      else if (this.open < this.options.maxSockets) this.connect(start, pending.reject);
      else {
        waiter = { take: start, reject: pending.reject };
        this.waiting.push(waiter);
      }
    });
  }

  private takeFree(): Connection | undefined {
    const now = performance.now();
    for (let c = this.free.pop(); c; c = this.free.pop()) {
      if (now - c.idleSince < c.idleLimitMs && !c.socket.destroyed) return c;
      c.close();
    }
    return undefined;
  }

  private connect(start: (c: Connection) => void, reject: (err: unknown) => void): void {
    const { protocol, hostname, port } = this.target;
    const https = protocol === 'https:';
    const socket = https
      ? tlsConnect({
          host: hostname,
          port: port ?? 443,
          servername: isIP(hostname) ? undefined : hostname,
          ALPNProtocols: ['http/1.1'],
          ...(this.options.ca ? { ca: this.options.ca } : {}),
        })
      : netConnect({ host: hostname, port: port ?? 80 });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 1_000);
    this.open += 1;
    const connection = new Connection(socket, this, this.options.idleTimeoutMs);
    const timer = setTimeout(() => {
      reject(
        Object.assign(
          new Error(
            `@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of ${this.options.connectionTimeoutMs} ms.`,
          ),
          { name: 'TimeoutError' },
        ),
      );
      connection.close();
    }, this.options.connectionTimeoutMs);
    // Until connected, a failure is the request's (the connection has nothing pending yet).
    const failed = (err: Error) => {
      clearTimeout(timer);
      reject(asHandlerError(err));
    };
    socket.once('error', failed);
    socket.once(https ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.off('error', failed);
      if (connection.closed) return;
      start(connection);
    });
    socket.once('close', () => {
      clearTimeout(timer);
      reject(hangUp());
    });
  }

  /** An answer read whole: the connection goes to the next waiting request, or idle. */
  release(connection: Connection): void {
    const next = this.waiting.shift();
    if (next) {
      next.take(connection);
      return;
    }
    if (this.free.length >= this.options.maxFreeSockets) {
      connection.close();
      return;
    }
    connection.idleSince = performance.now();
    connection.socket.unref();
    this.free.push(connection);
    this.idle();
  }

  closed(connection: Connection): void {
    this.open -= 1;
    const i = this.free.indexOf(connection);
    if (i >= 0) this.free.splice(i, 1);
    // A request waiting for a socket gets a new one in its place.
    const next = this.waiting.shift();
    if (next) this.connect(next.take, next.reject);
  }

  private forget(waiter: Waiter): void {
    const i = this.waiting.indexOf(waiter);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  /** Closes the connections idle past their limit; whether any stay idle. */
  sweep(now: number): boolean {
    for (const c of [...this.free]) if (now - c.idleSince >= c.idleLimitMs) c.close();
    return this.free.length > 0;
  }

  destroy(): void {
    for (const c of [...this.free]) c.close();
  }
}

/** The pool of raw connections, by scheme and host. */
export class RawHttpPool {
  private readonly hosts = new Map<string, HostPool>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: RawPoolOptions) {}

  /** Sends `request` (the request line, headers and body, as written) and reads its answer. */
  request(target: RawTarget, request: string, signal?: AbortSignal): Promise<RawAnswer> {
    const key = `${target.protocol}//${target.hostname}:${target.port ?? ''}`;
    let host = this.hosts.get(key);
    if (!host) {
      host = new HostPool(target, this.options, () => this.startSweeping());
      this.hosts.set(key, host);
    }
    return host.request(request, signal);
  }

  /** Connections open per host key, for tests: idle ones. */
  idleCount(): number {
    let n = 0;
    for (const host of this.hosts.values()) n += host.free.length;
    return n;
  }

  /** Closes every idle connection (requests in flight finish and their sockets close). */
  destroy(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const host of this.hosts.values()) host.destroy();
  }

  private startSweeping(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = performance.now();
      let idle = false;
      for (const host of this.hosts.values()) idle = host.sweep(now) || idle;
      if (!idle) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, SWEEP_MS);
    this.sweeper.unref();
  }
}

export { HttpResponseError };
