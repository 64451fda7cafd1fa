/**
 * One port for both protocols: a `net.Server` reads the first bytes of each connection and hands the
 * socket (with those bytes put back) to the HTTP/2 server if they are the HTTP/2 client preface (cleartext
 * h2c with prior knowledge, which is what the SDK's NodeHttp2Handler speaks to an `http://` endpoint), or to
 * the HTTP/1.1 server otherwise.
 */
import type { Server as HttpServer } from 'node:http';
import type { Http2Server } from 'node:http2';
import { createServer, type Server, type Socket } from 'node:net';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface SniffingServer {
  server: Server;
  port: number;
  /** Every connection accepted and not yet closed. */
  sockets: Set<Socket>;
}

export async function sniffingServer(h2: Http2Server, h1: HttpServer, port = 0): Promise<SniffingServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const http2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (http2 && seen.length < PREFACE.length) return;
      socket.off('data', onData);
      socket.pause();
      socket.unshift(seen);
      if (http2) {
        // The HTTP/2 session reads what is buffered itself (on the next tick), then the socket's handle.
        h2.emit('connection', socket);
      } else {
        // The HTTP/1.1 parser takes the buffered bytes as 'data' once the socket flows again.
        h1.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return { server, port: (server.address() as { port: number }).port, sockets };
}
