import { loadConfig } from '../../../src/config/config';
import { zooKeeperOptions } from '../../../src/coordination/sessionOptions';
import { startNotes } from '../../../src/config/startNotes';
import { isGeneratedPayload, stormTopologyAuth, stormZooKeeperConnect } from '../../../src/config/stormZooKeeper';

const spout = { region: 'us-east-1', streamName: 'orders', applicationName: 'app' };

describe("Storm's own ZooKeeper as the default", () => {
  it('builds the connect string from storm.zookeeper.servers and storm.zookeeper.port (2181 by default)', () => {
    expect(
      stormZooKeeperConnect({ 'storm.zookeeper.servers': ['zk1', 'zk2.example.com'], 'storm.zookeeper.port': 2182 }),
    ).toBe('zk1:2182,zk2.example.com:2182');
    expect(stormZooKeeperConnect({ 'storm.zookeeper.servers': ['zk1'] })).toBe('zk1:2181');
    expect(stormZooKeeperConnect({})).toBeUndefined();
  });

  it('uses it only when kinesis.spout.zookeeper.connect is not set, and says where it came from', () => {
    const storm = { 'storm.zookeeper.servers': ['zk1'], 'storm.zookeeper.port': 2181 };
    const defaulted = loadConfig({ ...storm, 'kinesis.spout': spout });
    expect(defaulted.zookeeper.connect).toBe('zk1:2181');
    expect(defaulted.origins.zookeeperConnect).toBe('storm.zookeeper.servers');
    const own = loadConfig({ ...storm, 'kinesis.spout': { ...spout, zookeeper: { connect: 'mine:1/chroot' } } });
    expect(own.zookeeper.connect).toBe('mine:1/chroot');
    expect(own.origins.zookeeperConnect).toBe('kinesis.spout.zookeeper.connect');
  });

  it('rejects unusable Storm settings by name', () => {
    expect(() => stormZooKeeperConnect({ 'storm.zookeeper.servers': 'zk1' })).toThrow(
      'bad configuration: storm.zookeeper.servers = "zk1": must be a non-empty list of host names',
    );
    expect(() => stormZooKeeperConnect({ 'storm.zookeeper.servers': ['zk1'], 'storm.zookeeper.port': 'x' })).toThrow(
      'bad configuration: storm.zookeeper.port = "x": must be a port number',
    );
  });
});

describe('ZooKeeper credentials', () => {
  const topologyAuth = (payload: string) => ({
    'storm.zookeeper.topology.auth.scheme': 'digest',
    'storm.zookeeper.topology.auth.payload': payload,
  });

  it("takes kinesis.spout.zookeeper.auth first, else the topology's, and protects nodes with stable credentials only", () => {
    const own = loadConfig({
      ...topologyAuth('storm:secret'),
      'kinesis.spout': { ...spout, zookeeper: { connect: 'z:1', auth: { scheme: 'digest', payload: 'spout:pw' } } },
    });
    expect(own.zookeeper).toMatchObject({ auth: { scheme: 'digest', payload: 'spout:pw' }, creatorOnly: true });
    expect(own.origins.zookeeperAuth).toBe('kinesis.spout.zookeeper.auth');
    const storm = loadConfig({
      ...topologyAuth('storm:secret'),
      'kinesis.spout': { ...spout, zookeeper: { connect: 'z:1' } },
    });
    expect(storm.zookeeper).toMatchObject({ auth: { scheme: 'digest', payload: 'storm:secret' }, creatorOnly: true });
    // StormSubmitter's own: authenticates, protects nothing (the next submission has other credentials).
    const generated = loadConfig({
      ...topologyAuth('-6128711329426437213:4977062546394870021'),
      'kinesis.spout': { ...spout, zookeeper: { connect: 'z:1' } },
    });
    expect(generated.zookeeper).toMatchObject({ auth: { scheme: 'digest' }, creatorOnly: false });
    const none = loadConfig({ 'kinesis.spout': { ...spout, zookeeper: { connect: 'z:1' } } });
    expect(none.zookeeper).toMatchObject({ auth: undefined, creatorOnly: false });
  });

  it('recognises the payloads StormSubmitter makes up', () => {
    expect(isGeneratedPayload('-6128711329426437213:4977062546394870021')).toBe(true);
    expect(isGeneratedPayload('123:456')).toBe(true);
    expect(isGeneratedPayload('kinesis:s3cr3t')).toBe(false);
  });

  it('refuses schemes the client cannot do, and never shows a payload', () => {
    expect(() => stormTopologyAuth({ 'storm.zookeeper.topology.auth.scheme': 'sasl' })).toThrow(
      /supports only "digest"/,
    );
    let message = '';
    try {
      stormTopologyAuth(topologyAuth('secret-without-colon'));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/storm.zookeeper.topology.auth.payload \(hidden\)/);
    expect(message).not.toContain('secret-without-colon');
  });

  it('start notes name where credentials come from, never the credentials', () => {
    const config = loadConfig({
      ...topologyAuth('storm:topsecret'),
      'topology.name': 'topo',
      'kinesis.spout': { region: 'us-east-1', streamName: 's', zookeeper: { connect: 'z:1' } },
    });
    const text = startNotes(config)
      .map((n) => n.message)
      .join('\n');
    expect(text).toContain('credentials from storm.zookeeper.topology.auth');
    expect(text).not.toContain('topsecret');
  });
});

describe('applicationName', () => {
  it('warns loudly when it defaults to the topology name, saying what that means', () => {
    const notes = startNotes(
      loadConfig({
        'topology.name': 'topo',
        'kinesis.spout': { region: 'us-east-1', streamName: 's', zookeeper: { connect: 'z:1' } },
      }),
    );
    const warning = notes.find((n) => n.message.startsWith('WARNING: kinesis.spout.applicationName is not set'));
    expect(warning?.level).toBe(3);
    expect(warning?.message).toMatch(/deployed under another name, this topology starts over/);
    expect(warning?.message).toMatch(/two spout components reading one stream .* split its shards/);
  });

  it('says nothing of the kind when it is set', () => {
    const notes = startNotes(
      loadConfig({ 'topology.name': 'topo', 'kinesis.spout': { ...spout, zookeeper: { connect: 'z:1' } } }),
    );
    expect(notes.some((n) => n.message.includes('applicationName is not set'))).toBe(false);
  });
});

describe('zooKeeperOptions (one session setup for the spout and the tools)', () => {
  const zk = { connect: 'zk:2181', root: '/ks', sessionTimeoutMs: 5_000 };
  it('protects nodes below the root when the credentials are fixed ones', () => {
    const config = loadConfig({
      'kinesis.spout': { ...spout, zookeeper: { ...zk, auth: { scheme: 'digest', payload: 'u:p' } } },
    });
    expect(zooKeeperOptions(config)).toEqual({
      connect: 'zk:2181',
      sessionTimeoutMs: 5_000,
      auth: { scheme: 'digest', payload: 'u:p' },
      creatorOnlyBelow: '/ks',
    });
  });

  it('authenticates with a payload StormSubmitter generated, but protects nothing with it', () => {
    const config = loadConfig({
      'storm.zookeeper.topology.auth.scheme': 'digest',
      'storm.zookeeper.topology.auth.payload': '123:-456',
      'kinesis.spout': { ...spout, zookeeper: zk },
    });
    expect(zooKeeperOptions(config)).toEqual({
      connect: 'zk:2181',
      sessionTimeoutMs: 5_000,
      auth: { scheme: 'digest', payload: '123:-456' },
      creatorOnlyBelow: undefined,
    });
  });
});

describe("Storm's ZooKeeper settings the spout does not use", () => {
  it('are not checked when kinesis.spout sets its own ensemble and credentials (a SASL-secured Storm, IPv6 servers)', () => {
    const storm = {
      'storm.zookeeper.servers': ['::1'],
      'storm.zookeeper.topology.auth.scheme': 'sasl',
      'storm.zookeeper.topology.auth.payload': 'x',
    };
    const own = { ...spout, zookeeper: { connect: 'zk:2181', auth: { scheme: 'digest', payload: 'u:p' } } };
    const config = loadConfig({ ...storm, 'kinesis.spout': own });
    expect(config.zookeeper.connect).toBe('zk:2181');
    expect(config.origins.zookeeperAuth).toBe('kinesis.spout.zookeeper.auth');
  });

  it('are checked, by name, when the spout would use them', () => {
    expect(() =>
      loadConfig({
        'storm.zookeeper.servers': ['zk'],
        'storm.zookeeper.topology.auth.scheme': 'sasl',
        'kinesis.spout': spout,
      }),
    ).toThrow(/storm.zookeeper.topology.auth.scheme = "sasl"/);
    expect(() => loadConfig({ 'storm.zookeeper.servers': 'zk', 'kinesis.spout': spout })).toThrow(
      /storm.zookeeper.servers = "zk"/,
    );
  });
});
