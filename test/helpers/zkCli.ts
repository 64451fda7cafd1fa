/** ZooKeeper's own command line (what `zkCli.sh` runs), fed commands on its input as an operator would type them. */
import { spawn } from 'node:child_process';

const CLASSPATH = ['/usr/share/java/zookeeper.jar', '/usr/share/java/slf4j-simple.jar'].join(':');

/** What zkCli prints when a command fails (it goes on with the next one, and exits 0 all the same). */
const FAILURES =
  /Insufficient permission.*|KeeperErrorCode.*|Node does not exist.*|Node already exists.*|Authentication is not valid.*/;

/** Runs `commands` in one zkCli session (once connected) against `server` (chroot allowed); resolves with what it printed. */
export function zkCli(server: string, commands: readonly string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'java',
      ['-cp', CLASSPATH, 'org.apache.zookeeper.ZooKeeperMain', '-server', server, '-waitforconnection'],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`zkCli ${commands.join('; ')} did not finish:\n${output}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', () => {
      clearTimeout(timer);
      const failed = FAILURES.exec(output);
      if (failed) reject(new Error(`zkCli ${commands.join('; ')}: ${failed[0]}\n${output}`));
      else resolve(output);
    });
    child.stdin.end(`${[...commands, 'quit'].join('\n')}\n`);
  });
}

/** The zkCli commands an error message names, in order, each written between double quotes. */
export function quotedCommands(message: string): string[] {
  return [...message.matchAll(/"((?:addauth|setAcl|deleteall|getAcl) [^"]+)"/g)].map((m) => m[1]);
}
