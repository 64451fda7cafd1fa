/**
 * node-zookeeper-client knows only the error codes of ZooKeeper 3.4 and throws `Unknown code` for any
 * other, from inside its socket handler: an uncaught exception that ends the process. ZooKeeper 3.6+
 * answers -124 to a client that did not authenticate with SASL when the ensemble requires it, so an
 * ensemble the client cannot use would crash the spout instead of being reported. Unknown codes become
 * ordinary errors carrying their code, named where we know them.
 */
import zookeeper from 'node-zookeeper-client';

/** Codes newer servers send (ZooKeeper's KeeperException.Code). */
export const NewerCode = {
  NO_WATCHER: -121,
  REQUEST_TIMEOUT: -122,
  RECONFIG_DISABLED: -123,
  SESSION_CLOSED_REQUIRE_SASL_AUTH: -124,
  QUOTA_EXCEEDED: -125,
  THROTTLED_OP: -127,
} as const;

let installed = false;

export function tolerateUnknownCodes(): void {
  if (installed) return;
  installed = true;
  const exceptions = zookeeper.Exception as unknown as { create(code: number, path?: string): Error };
  const original = exceptions.create.bind(exceptions);
  exceptions.create = (code: number, path?: string): Error => {
    try {
      return original(code, path);
    } catch {
      const name = Object.entries(NewerCode).find(([, value]) => value === code)?.[0] ?? 'UNKNOWN';
      return Object.assign(new Error(`Exception: ${name}[${code}]${path ? `@${path}` : ''}`), {
        name: 'Exception',
        code,
        getCode: () => code,
        getName: () => name,
        getPath: () => path,
      });
    }
  };
}
