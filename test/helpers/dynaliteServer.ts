/**
 * dynalite (npm, a DynamoDB emulator over LevelDB, in memory here) as a local process on a free loopback
 * port, for the KCL lease table's tests; stopped by its pid. It has no TransactWriteItems: nothing here
 * uses it.
 */
import type { ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { join, resolve } from 'node:path';
import { freePort, scratchDir, spawnLogged, stopProcess, waitUntilReady } from './ports';

export interface DynaliteServer {
  endpoint: string;
  /** The server process's pid (its CPU read from /proc by the benchmarks). */
  pid: number;
  stop(): Promise<void>;
}

const CLI = resolve(__dirname, '../../node_modules/dynalite/cli.js');

export async function startDynalite(): Promise<DynaliteServer> {
  const port = await freePort();
  const logFile = join(scratchDir('dynalite-'), 'dynalite.log');
  // Tables become ACTIVE at once (the default waits half a second per create).
  const child: ChildProcess = spawnLogged(
    process.execPath,
    [CLI, '--host', '127.0.0.1', '--port', String(port), '--createTableMs', '0', '--deleteTableMs', '0'],
    { logFile },
  );
  const listening = () =>
    new Promise<boolean>((done) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.end();
        done(true);
      });
      socket.once('error', () => done(false));
    });
  await waitUntilReady('dynalite', child, logFile, listening, 20_000);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    async stop() {
      // Gone already (the suite's teardown may have ended it first): nothing to stop.
      await stopProcess(child).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ESRCH') throw err;
      });
    },
  };
}
