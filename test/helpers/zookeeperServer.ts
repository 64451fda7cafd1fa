/** A real ZooKeeper (Debian's package) for integration tests: a standalone server, or a three-server ensemble. */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort, portIsFree, reservePorts, scratchDir, spawnLogged, stopProcess, waitUntilReady } from './ports';
import { startTcpProxy, type TcpProxy } from './tcpProxy';

/**
 * zookeeper.jar's manifest Class-Path already names its runtime jars
 * (zookeeper-jute, netty-*, slf4j-api, metrics-core, ...) by absolute path;
 * only an SLF4J binding is missing, without which ZooKeeper logs nothing at all.
 */
const CLASSPATH = ['/usr/share/java/zookeeper.jar', '/usr/share/java/slf4j-simple.jar'].join(':');
const START_TIMEOUT_MS = 20_000;

export interface ZooKeeperServer {
  connectString: string;
  port: number;
  dataDir: string;
  logFile: string;
  /** The server process's pid (its CPU and memory read from /proc by the benchmarks); 0 when not running. */
  readonly pid: number;
  stop(): Promise<void>;
  /** Stops and starts again on the same port and dataDir, so znodes (and unexpired sessions) survive. */
  restart(): Promise<void>;
}

/**
 * `extraConfig`: more zoo.cfg lines (SASL, TLS, ...); `extraClasspath`: jars those need (TLS: Netty's codec,
 * which zookeeper.jar's manifest does not name).
 */
export async function startZooKeeper(
  opts: { port?: number; dataDir?: string; extraConfig?: string[]; extraClasspath?: string[] } = {},
): Promise<ZooKeeperServer> {
  const dir = scratchDir('zk-');
  const port = opts.port ?? (await freePort());
  const dataDir = opts.dataDir ?? join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const logFile = join(dir, 'zookeeper.log');
  const configFile = join(dir, 'zoo.cfg');
  // tickTime 500 lets tests use session timeouts down to 1 s (2 ticks) for fast expiry.
  writeFileSync(
    configFile,
    [
      'tickTime=500',
      'minSessionTimeout=1000',
      'maxSessionTimeout=20000',
      `dataDir=${dataDir}`,
      `clientPort=${port}`,
      'clientPortAddress=127.0.0.1',
      'admin.enableServer=false',
      'maxClientCnxns=0',
      '4lw.commands.whitelist=*',
      ...(opts.extraConfig ?? []),
      '',
    ].join('\n'),
  );

  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    // Otherwise an older server still on this port would answer imok for us.
    if (!(await portIsFree(port))) throw new Error(`port ${port} is already in use; ZooKeeper not started`);
    child = spawnLogged(
      'java',
      [
        '-cp',
        [CLASSPATH, ...(opts.extraClasspath ?? [])].join(':'),
        'org.apache.zookeeper.server.ZooKeeperServerMain',
        configFile,
      ],
      { cwd: dir, logFile },
    );
    await waitUntilReady(`ZooKeeper on port ${port}`, child, logFile, () => serving(port), START_TIMEOUT_MS);
  };
  const stop = async (): Promise<void> => {
    if (child) await stopProcess(child);
  };

  await start();
  return {
    connectString: `127.0.0.1:${port}`,
    port,
    dataDir,
    logFile,
    get pid() {
      return child?.pid ?? 0;
    },
    stop,
    async restart() {
      await stop();
      await start();
    },
  };
}

/**
 * The port accepting TCP is not enough, nor is `ruok`: ZooKeeper answers imok as soon as it accepts
 * connections, before it has loaded its data (a restart under load took seconds there, and a client's
 * connect was closed meanwhile). `srvr` names the server's mode only once it serves requests.
 */
async function serving(port: number): Promise<boolean> {
  return /^Mode: /m.test(await fourLetterWord(port, 'srvr'));
}

/** Sends one of ZooKeeper's four-letter commands (ruok, srvr, mntr, cons, ...) and returns the answer ('' when none). */
export function fourLetterWord(port: number, word: string): Promise<string> {
  return new Promise((resolve) => {
    let reply = '';
    const socket = connect(port, '127.0.0.1', () => socket.end(word));
    socket.setTimeout(1000, () => socket.destroy());
    socket.on('data', (chunk) => (reply += chunk.toString()));
    socket.on('error', () => resolve(''));
    socket.on('close', () => resolve(reply));
  });
}

export interface EnsembleMember {
  id: number;
  clientPort: number;
  /** This member alone, so a client cannot move to another one. */
  connectString: string;
  logFile: string;
  /** 'leader', 'follower', or undefined while it does not serve (electing, cut off). */
  mode(): Promise<string | undefined>;
  stop(): Promise<void>;
}

export interface ZooKeeperEnsemble {
  members: EnsembleMember[];
  tickTime: number;
  syncLimit: number;
  /** Holds every quorum and election message between the isolatable member and the others, both ways (connections stay up). */
  cutOff(): void;
  heal(): void;
  stop(): Promise<void>;
}

const ENSEMBLE_SIZE = 3;

/**
 * Three servers on loopback, each with its own config: every link between `isolatable` and the two others
 * (the quorum port a follower connects to, and the election port either side connects to) goes through a
 * TCP proxy, so that member can be cut off from the leader while it keeps serving its clients. The lowest
 * id never leads while a higher one is up (equal zxids: the highest id wins), so isolatable 1 is a follower.
 */
export async function startZooKeeperEnsemble(opts: EnsembleOptions = {}): Promise<ZooKeeperEnsemble> {
  // Nine ports reserved, released, then bound by three JVMs: another process on the machine (a parallel test
  // file asking the kernel for a free port) can take one in between. Then the ensemble is started anew.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEnsembleOnce(opts);
    } catch (err) {
      if (attempt >= 3 || !/already in use/.test(String((err as Error).message))) throw err;
    }
  }
}

type EnsembleOptions = { isolatable?: number; tickTime?: number; initLimit?: number; syncLimit?: number };

async function startEnsembleOnce(opts: EnsembleOptions): Promise<ZooKeeperEnsemble> {
  const isolatable = opts.isolatable ?? 1;
  const tickTime = opts.tickTime ?? 200;
  const initLimit = opts.initLimit ?? 25;
  const syncLimit = opts.syncLimit ?? 10;
  const ids = Array.from({ length: ENSEMBLE_SIZE }, (_, i) => i + 1);
  const ports = new Map<number, { client: number; quorum: number; election: number }>();
  // Held until the servers start: the proxies below must not be handed one of these ports.
  const reserved = await reservePorts(3 * ids.length);
  for (const [i, id] of ids.entries()) {
    const [client, quorum, election] = reserved.ports.slice(3 * i, 3 * i + 3);
    ports.set(id, { client, quorum, election });
  }
  const proxies: TcpProxy[] = [];
  const proxied = new Map<number, { quorum: number; election: number }>();
  for (const id of ids) {
    const real = ports.get(id)!;
    const quorum = await startTcpProxy(real.quorum);
    const election = await startTcpProxy(real.election);
    proxies.push(quorum, election);
    proxied.set(id, { quorum: quorum.port, election: election.port });
  }
  const viaProxy = (viewer: number, peer: number) => viewer !== peer && (viewer === isolatable || peer === isolatable);

  const children = new Map<number, ChildProcess>();
  const starters: (() => void)[] = [];
  const members: EnsembleMember[] = ids.map((id) => {
    const dir = scratchDir(`zk${id}-`);
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'myid'), `${id}\n`);
    const logFile = join(dir, 'zookeeper.log');
    const configFile = join(dir, 'zoo.cfg');
    const peers = ids.map((peer) => {
      const { quorum, election } = viaProxy(id, peer) ? proxied.get(peer)! : ports.get(peer)!;
      return `server.${peer}=127.0.0.1:${quorum}:${election}`;
    });
    writeFileSync(
      configFile,
      [
        `tickTime=${tickTime}`,
        `initLimit=${initLimit}`,
        `syncLimit=${syncLimit}`,
        `minSessionTimeout=${2 * tickTime}`,
        `maxSessionTimeout=${40 * tickTime}`,
        `dataDir=${dataDir}`,
        `clientPort=${ports.get(id)!.client}`,
        'clientPortAddress=127.0.0.1',
        'admin.enableServer=false',
        'maxClientCnxns=0',
        '4lw.commands.whitelist=*',
        ...peers,
        '',
      ].join('\n'),
    );
    const clientPort = ports.get(id)!.client;
    starters.push(() => {
      // Small heap and the quick JIT tier: three JVMs start faster on a busy machine.
      const jvm = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];
      children.set(
        id,
        spawnLogged(
          'java',
          [...jvm, '-cp', CLASSPATH, 'org.apache.zookeeper.server.quorum.QuorumPeerMain', configFile],
          { cwd: dir, logFile },
        ),
      );
    });
    return {
      id,
      clientPort,
      connectString: `127.0.0.1:${clientPort}`,
      logFile,
      async mode() {
        const match = /^Mode: (\w+)/m.exec(await fourLetterWord(clientPort, 'srvr'));
        return match?.[1];
      },
      async stop() {
        const child = children.get(id);
        if (child) await stopProcess(child);
      },
    };
  });

  const stop = async (): Promise<void> => {
    await Promise.all(members.map((m) => m.stop()));
    await Promise.all(proxies.map((p) => p.close()));
  };
  try {
    await reserved.release();
    for (const id of ids)
      if (!(await portIsFree(ports.get(id)!.client)))
        throw new Error(`port ${ports.get(id)!.client} is already in use`);
    for (const start of starters) start();
    await Promise.all(
      members.map((m) =>
        waitUntilReady(
          `ZooKeeper ensemble member ${m.id}`,
          children.get(m.id)!,
          m.logFile,
          async () => ['leader', 'follower'].includes((await m.mode()) ?? ''),
          START_TIMEOUT_MS * 2,
        ),
      ),
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    members,
    tickTime,
    syncLimit,
    // Only the isolatable member's links go through proxies: pausing them all cuts exactly that member off.
    cutOff() {
      for (const proxy of proxies) proxy.pause();
    },
    heal() {
      for (const proxy of proxies) proxy.resume();
    },
    stop,
  };
}
