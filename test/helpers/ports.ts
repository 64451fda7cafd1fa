/**
 * Plumbing shared by the real-server helpers: free ports, child processes that
 * log to a file and are always stopped by pid, and polling for readiness.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Asks the kernel for an unused port. Another process may take it before our
 * server binds; that race is acceptable in tests.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port of a listening socket'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/**
 * Unused ports, each held by a listening socket until `release()`: a helper that picks several ports and then
 * opens other sockets of its own (proxies) before its servers bind them cannot be handed one of its own
 * picks again by the kernel meanwhile.
 */
export async function reservePorts(count: number): Promise<{ ports: number[]; release(): Promise<void> }> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.unref();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === 'string')
      throw new Error('could not read the port of a listening socket');
    return address.port;
  });
  return {
    ports,
    release: async () => {
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}

/** True if nothing listens on 127.0.0.1:port (checked by binding it briefly). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const running = new Set<ChildProcess>();
const scratchDirs = new Set<string>();

/** A temp dir (config, data, logs), deleted by the last-resort cleanup rather than by stop(), so restart() works. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratchDirs.add(dir);
  return dir;
}

/**
 * Last resort for servers a test forgot to stop (or threw before stopping):
 * they would outlive the test run and hold their ports. Synchronous, because
 * 'exit' handlers must be, hence SIGKILL. KEEP_SERVER_DIRS=1 keeps the logs.
 */
function killLeftovers(): void {
  for (const child of running) {
    if (child.pid !== undefined && isRunning(child)) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  if (!process.env.KEEP_SERVER_DIRS) {
    for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

process.on('exit', killLeftovers);
// Jest gives each test file a copy of `process` whose 'exit' never fires, so
// the hook above is dead there; a root-level afterAll is the jest equivalent.
// It must be registered while the test file loads, which is when we are imported.
if (typeof afterAll === 'function') {
  try {
    afterAll(killLeftovers);
  } catch {
    // imported lazily from inside a test: only the 'exit' hook remains
  }
}

const spawnErrors = new WeakMap<ChildProcess, Error>();

/** A child that failed to spawn (e.g. ENOENT) has no pid and never exits. */
function isRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

/** Starts a server whose stdout and stderr are appended to logFile. */
export function spawnLogged(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; logFile: string },
): ChildProcess {
  // The child gets its own copy of the descriptor, so ours can be closed at once.
  const fd = openSync(options.logFile, 'a');
  try {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', fd, fd],
    });
    running.add(child);
    child.once('exit', () => running.delete(child));
    // Without a listener, a failed spawn (e.g. no java) would crash the test process.
    child.once('error', (err) => {
      spawnErrors.set(child, err);
      running.delete(child);
    });
    return child;
  } finally {
    closeSync(fd);
  }
}

/** SIGTERM by pid, SIGKILL after graceMs, resolves once the process has exited. */
export async function stopProcess(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.pid === undefined || !isRunning(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.pid !== undefined && isRunning(child)) process.kill(child.pid, 'SIGKILL');
  }, graceMs);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

export function logTail(logFile: string, chars = 3000): string {
  try {
    return readFileSync(logFile, 'utf8').slice(-chars);
  } catch (err) {
    return `<cannot read ${logFile}: ${(err as Error).message}>`;
  }
}

/**
 * Polls probe() until it returns true. Gives up early if the child dies, since
 * waiting out the full timeout would only hide the real error in its log.
 */
export async function waitUntilReady(
  what: string,
  child: ChildProcess,
  logFile: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Sleeping first also lets a spawn 'error' event arrive before we report it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (!isRunning(child)) {
      const why = spawnErrors.get(child)?.message ?? `code ${child.exitCode}, signal ${child.signalCode}`;
      throw new Error(`${what} exited (${why}) before it was ready; log tail:\n${logTail(logFile)}`);
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) {
      await stopProcess(child);
      throw new Error(`${what} was not ready after ${timeoutMs} ms; log tail:\n${logTail(logFile)}`);
    }
  }
}
