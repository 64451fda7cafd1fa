import { parseTarget, parseToolArgs } from '../../../src/tools/args';
import { ExitCode, ToolError } from '../../../src/tools/exitCodes';

describe('parseToolArgs', () => {
  it('reads status options; --watch takes optional seconds', () => {
    expect(parseToolArgs('status', ['--config', 'c.json'])).toEqual({
      tool: 'status',
      config: 'c.json',
      json: false,
      watchSeconds: undefined,
    });
    expect(parseToolArgs('status', ['--watch', '--config', 'c.json', '--json'])).toEqual({
      tool: 'status',
      config: 'c.json',
      json: true,
      watchSeconds: 5,
    });
    expect(parseToolArgs('status', ['--config=c.json', '--watch', '2'])).toMatchObject({ watchSeconds: 2 });
    expect(parseToolArgs('status', ['--help'])).toEqual({ tool: 'help' });
  });

  it('reads reset options', () => {
    expect(
      parseToolArgs('reset', [
        '--config',
        'c.json',
        '--to',
        'trim_horizon',
        '--shards',
        'shardId-1,shardId-2,shardId-1',
        '--force',
        '--yes',
      ]),
    ).toEqual({
      tool: 'reset',
      config: 'c.json',
      to: { kind: 'TRIM_HORIZON' },
      shards: ['shardId-1', 'shardId-2'],
      force: true,
      yes: true,
    });
  });

  it('reads deregister-consumer options', () => {
    expect(parseToolArgs('deregister-consumer', ['--config', 'c.json'])).toEqual({
      tool: 'deregister-consumer',
      config: 'c.json',
      yes: false,
    });
    expect(parseToolArgs('deregister-consumer', ['--config=c.json', '--yes'])).toMatchObject({ yes: true });
  });

  it.each([
    ['status', ['--json'], 'status: --config <file.json> is required'],
    ['status', ['--config', 'c', '--watch', '0'], 'status: --watch "0": seconds between redraws, from 1 to 3600'],
    [
      'status',
      ['--config', 'c', '--to', 'LATEST'],
      'status: unknown argument "--to"; allowed: --config, --stream, --json, --watch',
    ],
    ['status', ['--config', 'c', '--config', 'd'], 'status: --config given twice'],
    ['reset', ['--config', 'c'], 'reset: --to TRIM_HORIZON|LATEST|<ISO-8601 timestamp>|<sequence number> is required'],
    ['reset', ['--config', 'c', '--to'], 'reset: --to needs a value'],
    [
      'reset',
      ['--config', 'c', '--to', 'LATEST', '--shards', 'a b'],
      '--shards "a b": expected shard ids separated by commas',
    ],
    ['reset', ['--config', 'c', '--to', 'LATEST', '--yes=no'], 'reset: --yes takes no value'],
    [
      'deregister-consumer',
      ['--config', 'c', '--force'],
      'deregister-consumer: unknown argument "--force"; allowed: --config, --stream, --yes',
    ],
  ] as const)('%s %j is refused: %s', (tool, args, message) => {
    let error: unknown;
    try {
      parseToolArgs(tool, args);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).exitCode).toBe(ExitCode.Usage);
    expect((error as ToolError).message).toContain(message);
  });
});

describe('parseTarget', () => {
  it('reads keywords, timestamps and sequence numbers (kept as strings: they exceed 2^53)', () => {
    expect(parseTarget('LATEST')).toEqual({ kind: 'LATEST' });
    expect(parseTarget('2026-12-01T04:00:00Z')).toEqual({
      kind: 'AT_TIMESTAMP',
      timestampMs: Date.parse('2026-12-01T04:00:00Z'),
      text: '2026-12-01T04:00:00Z',
    });
    expect(parseTarget('2026-12-01T05:00:00+01:00')).toMatchObject({ timestampMs: Date.parse('2026-12-01T04:00:00Z') });
    expect(parseTarget('49590338271490256608559692538361571095921575989136588898')).toEqual({
      kind: 'AFTER',
      sequenceNumber: '49590338271490256608559692538361571095921575989136588898',
    });
  });

  it.each(['yesterday', '2026-13-45', '12:00', '1e5', '-5', ''])('refuses %j', (text) => {
    expect(() => parseTarget(text)).toThrow('allowed: TRIM_HORIZON, LATEST, an ISO-8601 timestamp');
  });
});

describe('parseToolArgs import', () => {
  const base = ['--config', 'c.json', '--source-zookeeper', 'zk1:2181'];
  it('reads an awslabs import, its prefix defaulting to kinesis_storm_spout', () => {
    expect(
      parseToolArgs('import', [...base, '--from', 'awslabs-storm-spout', '--source-topology', 'old', '--dry-run']),
    ).toEqual({
      tool: 'import',
      config: 'c.json',
      source: { from: 'awslabs-storm-spout', zookeeper: 'zk1:2181', root: 'kinesis_storm_spout', topology: 'old' },
      dryRun: true,
      overwrite: false,
      yes: false,
    });
  });

  it('reads a storm-kinesis import with its zkNode and another source stream', () => {
    expect(
      parseToolArgs('import', [
        ...base,
        '--from=storm-kinesis',
        '--source-root',
        '/committed',
        '--source-stream',
        'old-stream',
        '--stream',
        'new-stream',
        '--overwrite',
        '--yes',
      ]),
    ).toEqual({
      tool: 'import',
      config: 'c.json',
      stream: 'new-stream',
      source: { from: 'storm-kinesis', zookeeper: 'zk1:2181', root: '/committed', stream: 'old-stream' },
      dryRun: false,
      overwrite: true,
      yes: true,
    });
  });

  it.each([
    [[...base], '--from awslabs-storm-spout|storm-kinesis|kcl is required'],
    [[...base, '--from', 'kinesalite'], 'is required (not "kinesalite")'],
    [[...base, '--from', 'kcl'], 'import: --source-zookeeper is for the ZooKeeper sources, not --from kcl'],
    [['--config', 'c.json', '--from', 'storm-kinesis', '--source-root', 'x'], '--source-zookeeper'],
    [[...base, '--from', 'awslabs-storm-spout'], '--source-topology <name> is required'],
    [[...base, '--from', 'storm-kinesis'], '--source-root <zkNode> is required'],
    [
      [...base, '--from', 'storm-kinesis', '--source-root', 'x', '--source-topology', 't'],
      'storm-kinesis paths hold no topology name',
    ],
    [[...base, '--from', 'storm-kinesis', '--source-root', 'x', '--to', 'LATEST'], 'unknown argument "--to"'],
  ])('refuses %j', (args, message) => {
    expect(() => parseToolArgs('import', args)).toThrow(message);
  });
});

describe('parseToolArgs import --from kcl and export --to kcl', () => {
  it('reads the lease table, its endpoint, the failover time and the AT_TIMESTAMP time', () => {
    expect(
      parseToolArgs('import', [
        '--from',
        'kcl',
        '--source-table',
        'orders-app',
        '--source-endpoint',
        'http://127.0.0.1:4567',
        '--source-timestamp',
        '2026-12-01T04:00:00Z',
        '--config',
        'c.json',
        '--dry-run',
      ]),
    ).toEqual({
      tool: 'import',
      config: 'c.json',
      source: {
        from: 'kcl',
        table: 'orders-app',
        endpoint: 'http://127.0.0.1:4567',
        failoverMs: 10_000,
        timestampMs: Date.parse('2026-12-01T04:00:00Z'),
      },
      dryRun: true,
      overwrite: false,
      yes: false,
    });
    expect(
      parseToolArgs('export', ['--to', 'kcl', '--table', 't', '--config', 'c', '--create-table', '--yes']),
    ).toEqual({
      tool: 'export',
      config: 'c',
      table: 't',
      createTable: true,
      dryRun: false,
      overwrite: false,
      yes: true,
    });
  });

  it.each([
    [['import', '--from', 'kcl', '--config', 'c'], "--source-table <name> (KCL's lease table"],
    [
      ['import', '--from', 'kcl', '--source-table', 't', '--source-timestamp', 'LATEST', '--config', 'c'],
      'an ISO-8601 timestamp',
    ],
    [
      ['import', '--from', 'kcl', '--source-table', 't', '--source-failover-ms', '10s', '--config', 'c'],
      'milliseconds',
    ],
    [['import', '--from', 'storm-kinesis', '--source-table', 't', '--config', 'c'], '--source-table is for --from kcl'],
    [['export', '--table', 't', '--config', 'c'], 'export: --to kcl is required'],
    [['export', '--to', 'flink', '--table', 't', '--config', 'c'], '(not "flink")'],
    [['export', '--to', 'kcl', '--config', 'c'], '--table <name>'],
    [
      ['export', '--to', 'kcl', '--table', 't', '--multi-stream-account', 'acct', '--config', 'c'],
      'a 12-digit AWS account id',
    ],
  ])('refuses %j', ([tool, ...args], message) => {
    expect(() => parseToolArgs(tool as 'import', args)).toThrow(message);
  });
});
