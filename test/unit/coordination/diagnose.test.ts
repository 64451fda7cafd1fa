import { createServer, type Server } from 'node:net';
import { diagnoseConnect, serversOf } from '../../../src/coordination/diagnose';

describe('why a connect string gives no session', () => {
  it('parses servers, ports and a chroot', () => {
    expect(serversOf('a:1,b:2/chroot/x')).toEqual([
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
    ]);
    expect(serversOf('zk')).toEqual([{ host: 'zk', port: 2181 }]);
  });

  it('a name that does not resolve, and a port nobody listens on', async () => {
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', () => r()));
    const port = (free.address() as { port: number }).port;
    await new Promise((r) => free.close(r));
    const why = await diagnoseConnect(`zk.invalid:2181,127.0.0.1:${port}`);
    expect(why).toMatch(/^zk\.invalid does not resolve \(ENOTFOUND\)/);
    expect(why).toContain(`nothing listens at 127.0.0.1:${port} (connection refused)`);
  });

  it('a server that accepts and says nothing is not taken for TLS', async () => {
    const quiet: Server = createServer(() => undefined);
    await new Promise<void>((r) => quiet.listen(0, '127.0.0.1', () => r()));
    const port = (quiet.address() as { port: number }).port;
    try {
      expect(await diagnoseConnect(`127.0.0.1:${port}`, 500)).toBe(
        `127.0.0.1:${port} accepts connections but gave no session: the server may be outside its quorum, overloaded, or refusing this host (maxClientCnxns, 60 per host by default)`,
      );
    } finally {
      quiet.close();
    }
  });
});
