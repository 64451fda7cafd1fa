/**
 * Why a ZooKeeper connect string gives no session, found out the way an operator would: does each host
 * resolve, does anything listen on its port, does it speak TLS (which the pure-JS client cannot). Run
 * only after a connect attempt failed, each probe bounded.
 */
import { lookup } from 'node:dns/promises';
import { type Socket, connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { ErrorCode, SpoutError } from '../errors';
import { isNoSession } from './zkErrors';
import type { ConnectZooKeeper } from './zooKeeper';

export interface Server {
  host: string;
  port: number;
}

/** The servers of `host:port[,host:port...][/chroot]` (a missing port is ZooKeeper's 2181). */
export function serversOf(connectString: string): Server[] {
  const hosts = connectString.split('/')[0];
  return hosts
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      const colon = entry.lastIndexOf(':');
      if (colon < 0) return { host: entry, port: 2181 };
      return { host: entry.slice(0, colon), port: Number(entry.slice(colon + 1)) };
    });
}

type Probe = 'open' | 'refused' | 'silent' | 'tls' | { error: string };

function tcpProbe(server: Server, timeoutMs: number): Promise<Probe> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: server.host, port: server.port });
    const done = (result: Probe) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done('silent'));
    socket.once('connect', () => done('open'));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ECONNREFUSED' ? 'refused' : { error: err.code ?? err.message }),
    );
  });
}

/** True when the server answers a TLS ClientHello as a TLS server would (a handshake, or a TLS alert). */
function speaksTls(server: Server, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: server.host,
      port: server.port,
      rejectUnauthorized: false,
      servername: undefined,
    });
    const done = (tls: boolean) => {
      socket.destroy();
      resolve(tls);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('secureConnect', () => done(true));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done(
        (/^ERR_SSL_/.test(err.code ?? '') &&
          !/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|RECORD_LAYER/.test(err.code ?? '')) ||
          /alert/i.test(err.message),
      ),
    );
  });
}

async function diagnoseServer(server: Server, timeoutMs: number): Promise<string> {
  const where = `${server.host}:${server.port}`;
  try {
    await lookup(server.host);
  } catch (err) {
    return `${server.host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'}): check the host name in the connect string and the worker's DNS`;
  }
  const probe = await tcpProbe(server, timeoutMs);
  if (probe === 'refused')
    return `nothing listens at ${where} (connection refused): is ZooKeeper running there, on that port?`;
  if (probe === 'silent')
    return `${where} does not answer (no TCP connection within ${timeoutMs} ms): a firewall, or the host is down`;
  if (typeof probe === 'object') return `${where}: ${probe.error}`;
  if (await speaksTls(server, timeoutMs)) {
    return `${where} speaks TLS: the ensemble requires TLS (secureClientPort), which this spout's ZooKeeper client (node-zookeeper-client) cannot use; give it a plain clientPort`;
  }
  return `${where} accepts connections but gave no session: the server may be outside its quorum, overloaded, or refusing this host (maxClientCnxns, 60 per host by default)`;
}

/** One line per server (at most the first five), each probe bounded by `timeoutMs`. */
export async function diagnoseConnect(connectString: string, timeoutMs = 1_500): Promise<string> {
  const servers = serversOf(connectString).slice(0, 5);
  const findings = await Promise.all(
    servers.map((server) =>
      diagnoseServer(server, timeoutMs).catch((err: Error) => `${server.host}:${server.port}: ${err.message}`),
    ),
  );
  return findings.join('; ');
}

/**
 * `connect`, whose failure to get a session says why: the client itself only times out. The probes add
 * at most two of their bounds to a failed attempt.
 */
export function diagnosingConnect(connect: ConnectZooKeeper): ConnectZooKeeper {
  return async (options) => {
    try {
      return await connect(options);
    } catch (err) {
      if (!isNoSession(err)) throw err;
      const why = await diagnoseConnect(options.connect);
      throw new SpoutError(ErrorCode.ZooKeeper, `${(err as Error).message}: ${why}`, { retriable: true, cause: err });
    }
  };
}
