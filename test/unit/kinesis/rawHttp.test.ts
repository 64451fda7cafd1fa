/**
 * The raw transport's pool (src/kinesis/rawHttp.ts) against real local servers: Node's HTTP and HTTPS servers
 * for what a server does right, a bare TCP server for what one does wrong. Sockets are reused only after a
 * whole answer that allows it; the pool stays within its bounds; failures are the SDK handler's.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpResponseError } from '../../../src/kinesis/httpResponse';
import { RawHttpPool, type RawPoolOptions, type RawTarget, requestText } from '../../../src/kinesis/rawHttp';

const OPTIONS: RawPoolOptions = { maxSockets: 3, maxFreeSockets: 2, idleTimeoutMs: 30_000, connectionTimeoutMs: 2_000 };
const REQUEST = 'POST / HTTP/1.1\r\nhost: test\r\ncontent-length: 2\r\n\r\nhi';
const pools: RawHttpPool[] = [];
const servers: Server[] = [];

function pool(options: Partial<RawPoolOptions> = {}): RawHttpPool {
  const p = new RawHttpPool({ ...OPTIONS, ...options });
  pools.push(p);
  return p;
}

afterEach(async () => {
  for (const p of pools.splice(0)) p.destroy();
  await Promise.all(
    servers.splice(0).map((s) => {
      (s as HttpServer).closeAllConnections?.();
      return new Promise((resolve) => s.close(resolve));
    }),
  );
});

/** A server listening on a free port, counting the connections it accepts and the requests it reads. */
async function listen<S extends Server>(
  server: S,
): Promise<{ target: RawTarget; connections: () => number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  server.on(server instanceof createHttpsServer().constructor ? 'secureConnection' : 'connection', (s: Socket) =>
    sockets.push(s),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { target: { protocol: 'http:', hostname: '127.0.0.1', port }, connections: () => sockets.length, sockets };
}

/** Waits until `probe` holds (a machine under load can be slow to deliver a close), at most 10 s. */
async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const http = (handler: RequestListener, keepAliveTimeout = 5_000) =>
  listen(Object.assign(createHttpServer(handler), { keepAliveTimeout }));

const echo: RequestListener = (req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => {
    body += c.toString();
  });
  req.on('end', () => res.end(`got ${body}`));
};

/** A TCP server that answers each request's bytes with `reply` (its socket, the bytes received so far). */
async function tcp(reply: (socket: Socket, received: string) => void) {
  const server = createNetServer((socket) => {
    let received = '';
    socket.on('data', (c: Buffer) => {
      received += c.toString('latin1');
      reply(socket, received);
    });
    socket.on('error', () => undefined);
  });
  const closed: Socket[] = [];
  server.on('connection', (s: Socket) => s.on('close', () => closed.push(s)));
  return { ...(await listen(server)), closed: () => closed.length };
}

describe('connections reused, bounded, closed', () => {
  test('sequential requests share one connection; the answer is the whole answer', async () => {
    const server = await http(echo);
    const p = pool();
    for (let i = 0; i < 5; i += 1) {
      const answer = await p.request(server.target, REQUEST);
      expect(answer).toMatchObject({ statusCode: 200, reason: 'OK' });
      expect(String(answer.body)).toBe('got hi');
    }
    expect(server.connections()).toBe(1);
    expect(p.idleCount()).toBe(1);
  });

  test('at most maxSockets connections, the rest waiting their turn; at most maxFreeSockets kept idle', async () => {
    const server = await http((req, res) => setTimeout(() => echo(req, res), 20));
    const p = pool();
    const answers = await Promise.all(Array.from({ length: 20 }, () => p.request(server.target, REQUEST)));
    expect(answers.every((a) => String(a.body) === 'got hi')).toBe(true);
    expect(server.connections()).toBe(3);
    expect(p.idleCount()).toBe(2);
  });

  test("the server's Connection: close is honoured", async () => {
    const server = await http((req, res) => {
      res.setHeader('connection', 'close');
      echo(req, res);
    });
    const p = pool();
    await p.request(server.target, REQUEST);
    await p.request(server.target, REQUEST);
    expect(server.connections()).toBe(2);
    expect(p.idleCount()).toBe(0);
  });

  test("a connection idle past idleTimeoutMs, or the server's Keep-Alive timeout less a second, is not reused", async () => {
    const idle = await http(echo);
    const p = pool({ idleTimeoutMs: 50 });
    await p.request(idle.target, REQUEST);
    await new Promise((r) => setTimeout(r, 100));
    await p.request(idle.target, REQUEST);
    expect(idle.connections()).toBe(2);

    const short = await http(echo, 1_000); // Keep-Alive: timeout=1
    const q = pool();
    await q.request(short.target, REQUEST);
    await q.request(short.target, REQUEST);
    expect(short.connections()).toBe(2);
  });

  test('idle connections are closed by the sweep', async () => {
    const server = await tcp((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    const p = pool({ idleTimeoutMs: 100 });
    await p.request(server.target, REQUEST);
    expect(p.idleCount()).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(p.idleCount()).toBe(1); // the sweep runs each second
    await until('the sweep', () => p.idleCount() === 0);
    await until('the server to see the close', () => server.closed() === 1);
  });
});

describe('a connection that misbehaves is never reused', () => {
  test('an answer cut off in its body: the answer with its body the error; the next request on a new connection', async () => {
    const server = await tcp((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    const p = pool();
    const answer = await p.request(server.target, REQUEST);
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toBeInstanceOf(HttpResponseError);
    expect(String(answer.body)).toContain('7 bytes missing');
    await p.request(server.target, REQUEST);
    expect(server.connections()).toBe(2);
  });

  test('bytes that are not an answer: an HttpResponseError, the socket closed', async () => {
    const server = await tcp((socket) => socket.write('SSH-2.0-OpenSSH\r\n\r\n'));
    const p = pool();
    await expect(p.request(server.target, REQUEST)).rejects.toThrow(/not an HTTP\/1.x status line/);
    await until('the server to see the close', () => server.closed() === 1);
  });

  test("closed before any answer: the SDK handler's socket hang up (ECONNRESET, a TimeoutError)", async () => {
    const server = await tcp((socket) => socket.destroy());
    await expect(pool().request(server.target, REQUEST)).rejects.toMatchObject({
      message: 'socket hang up',
      code: 'ECONNRESET',
      name: 'TimeoutError',
    });
  });

  test('bytes after the answer, or while idle: the answer stands, the connection is closed', async () => {
    const after = await tcp((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA'));
    const p = pool();
    expect(String((await p.request(after.target, REQUEST)).body)).toBe('ok');
    await p.request(after.target, REQUEST);
    expect(after.connections()).toBe(2);

    const idle = await tcp((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      setTimeout(() => socket.write('late'), 20);
    });
    const q = pool();
    await q.request(idle.target, REQUEST);
    expect(q.idleCount()).toBe(1);
    await until('the late bytes to close the idle socket', () => q.idleCount() === 0);
    await until('the server to see the close', () => idle.closed() === 1);
  });

  test('an abort: an AbortError at once, the socket closed; an aborted signal sends nothing', async () => {
    let received = 0;
    const server = await tcp(() => {
      received += 1;
    });
    const p = pool();
    const controller = new AbortController();
    const sent = p.request(server.target, REQUEST, controller.signal);
    await until('the request to arrive', () => received > 0);
    controller.abort('shard released');
    await expect(sent).rejects.toMatchObject({ name: 'AbortError', message: 'shard released' });
    await until('the server to see the close', () => server.closed() === 1);
    await expect(p.request(server.target, REQUEST, controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(server.connections()).toBe(1);
  });
});

describe('connecting', () => {
  test('a refused connection: the socket error', async () => {
    const server = await tcp(() => undefined);
    const { target } = server;
    await new Promise((resolve) => servers.pop()!.close(resolve));
    await expect(pool().request(target, REQUEST)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  test('not connected within connectionTimeoutMs (a TLS handshake never answered): the SDK handler TimeoutError', async () => {
    const server = await tcp(() => undefined);
    const started = Date.now();
    await expect(
      pool({ connectionTimeoutMs: 200 }).request({ ...server.target, protocol: 'https:' }, REQUEST),
    ).rejects.toMatchObject({
      name: 'TimeoutError',
      message: expect.stringContaining('within the configured timeout of 200 ms'),
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  describe('https', () => {
    let key: Buffer;
    let cert: Buffer;
    beforeAll(() => {
      const dir = mkdtempSync(join(tmpdir(), 'rawhttp-'));
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=DNS:localhost',
        ],
        { stdio: 'ignore' },
      );
      key = readFileSync(join(dir, 'key.pem'));
      cert = readFileSync(join(dir, 'cert.pem'));
    });

    async function httpsServer() {
      const names: (string | false)[] = [];
      const server = createHttpsServer({ key, cert }, echo);
      server.on('secureConnection', (s: Socket & { servername?: string | false }) => names.push(s.servername ?? false));
      const listening = await listen(server);
      return { target: { ...listening.target, protocol: 'https:' as const, hostname: 'localhost' }, names };
    }

    test('SNI sent, the certificate checked against the trusted ones, the connection reused', async () => {
      const server = await httpsServer();
      const p = pool({ ca: cert });
      expect(String((await p.request(server.target, REQUEST)).body)).toBe('got hi');
      expect(String((await p.request(server.target, REQUEST)).body)).toBe('got hi');
      expect(server.names).toEqual(['localhost']);
    });

    test("by default Node's certificate authorities: a certificate of none of them is refused", async () => {
      const server = await httpsServer();
      await expect(pool().request(server.target, REQUEST)).rejects.toMatchObject({
        code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY/),
      });
    });
  });
});

describe('the request as written', () => {
  test('the request line, the headers in order, the body; a value that would split the request refused as Node refuses it', () => {
    expect(requestText('POST', '/', { host: 'h', 'content-length': '2' }, 'hi')).toBe(
      'POST / HTTP/1.1\r\nhost: h\r\ncontent-length: 2\r\n\r\nhi',
    );
    expect(() => requestText('POST', '/', { 'x-amz-security-token': 'a\r\nx-injected: 1' }, '')).toThrow(
      'Invalid character in header content ["x-amz-security-token"]',
    );
    expect(() => requestText('POST', '/', { 'bad name': 'v' }, '')).toThrow(
      'Header name must be a valid HTTP token ["bad name"]',
    );
  });
});
