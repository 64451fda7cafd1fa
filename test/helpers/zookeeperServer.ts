/** A real standalone ZooKeeper (Debian's package) for integration tests. */
import { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort, portIsFree, scratchDir, spawnLogged, stopProcess, waitUntilReady } from './ports';

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
  stop(): Promise<void>;
  /** Stops and starts again on the same port and dataDir, so znodes (and unexpired sessions) survive. */
  restart(): Promise<void>;
}

export async function startZooKeeper(opts: { port?: number; dataDir?: string } = {}): Promise<ZooKeeperServer> {
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
      '',
    ].join('\n'),
  );

  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    // Otherwise an older server still on this port would answer imok for us.
    if (!(await portIsFree(port))) throw new Error(`port ${port} is already in use; ZooKeeper not started`);
    child = spawnLogged(
      'java',
      ['-cp', CLASSPATH, 'org.apache.zookeeper.server.ZooKeeperServerMain', configFile],
      { cwd: dir, logFile },
    );
    await waitUntilReady(`ZooKeeper on port ${port}`, child, logFile, () => ruok(port), START_TIMEOUT_MS);
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
    stop,
    async restart() {
      await stop();
      await start();
    },
  };
}

/** The port accepting TCP is not enough: ZooKeeper answers imok only once it serves requests. */
function ruok(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    let reply = '';
    const socket = connect(port, '127.0.0.1', () => socket.end('ruok'));
    socket.setTimeout(1000, () => socket.destroy());
    socket.on('data', (chunk) => (reply += chunk.toString()));
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(reply === 'imok'));
  });
}
