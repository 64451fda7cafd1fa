/** The tools' command lines, parsed into what each tool was asked to do (pure: no file, no clock). */
import { usageError } from './exitCodes';
import type { ExportOptions } from './exportKcl';
import type { ImportOptions } from './import';
import { KCL_DEFAULT_FAILOVER_MS } from './importKcl';
import { AWSLABS_DEFAULT_PREFIX, SOURCES, type SourceKind } from './importSource';
import type { ResetOptions } from './reset';

export type ResetTarget =
  | { kind: 'TRIM_HORIZON' }
  | { kind: 'LATEST' }
  | { kind: 'AT_TIMESTAMP'; timestampMs: number; text: string }
  /** Resume after this record: what a checkpoint means, and what `status` shows. */
  | { kind: 'AFTER'; sequenceNumber: string };

export type ToolCommand =
  | { tool: 'help' }
  | { tool: 'status'; config: string; stream?: string; json: boolean; watchSeconds: number | undefined }
  | ({ tool: 'reset' } & ResetOptions)
  | { tool: 'deregister-consumer'; config: string; stream?: string; yes: boolean }
  | ({ tool: 'import' } & ImportOptions)
  | ({ tool: 'export' } & ExportOptions);

export const DEFAULT_WATCH_SECONDS = 5;

export const USAGE = `Usage:
  kinesis-spout status --config <file.json> [--stream <name>] [--json] [--watch [seconds]]
  kinesis-spout reset  --config <file.json> [--stream <name>] --to TRIM_HORIZON|LATEST|<ISO-8601 timestamp>|<sequence number>
                       [--shards id,id,...] [--force] [--yes]
  kinesis-spout deregister-consumer --config <file.json> [--stream <name>] [--yes]
  kinesis-spout import --from awslabs-storm-spout|storm-kinesis --source-zookeeper <host:port,...>
                       [--source-root <path>] [--source-topology <name>] [--source-stream <name>]
                       --config <file.json> [--stream <name>] [--dry-run] [--overwrite] [--yes]
  kinesis-spout import --from kcl --source-table <lease table> [--source-endpoint <url>] [--source-stream <name>]
                       [--source-failover-ms <ms>] [--source-timestamp <ISO-8601>]
                       --config <file.json> [--stream <name>] [--dry-run] [--overwrite] [--yes]
  kinesis-spout export --to kcl --table <lease table> [--endpoint <url>] [--create-table] [--multi-stream-account <id>]
                       [--failover-ms <ms>] --config <file.json> [--stream <name>] [--dry-run] [--overwrite] [--yes]

<file.json> holds the spout's "kinesis.spout" map, or a topology conf with a "kinesis.spout" key
(and optionally topology.name, storm.zookeeper.servers, storm.zookeeper.port,
storm.zookeeper.topology.auth.scheme/payload).

--stream  with a configuration of several streams ("streams"): the one to look at (by name, or its ARN's tail);
        required by reset and deregister-consumer, status shows every stream without it.
status  per shard: state, parents, owner, checkpoint, lag; --watch redraws every ${DEFAULT_WATCH_SECONDS} s (or as given) until Ctrl-C.
reset   moves checkpoints (of every shard, or of --shards and their descendants); prints the plan and asks
        for "yes" (--yes: do not ask); refuses while a lease is held unless --force.
import  writes this application's checkpoints from an old Storm Kinesis spout's ZooKeeper state (docs/migration.md):
        --source-root: awslabs-storm-spout's zookeeperPrefix (default ${AWSLABS_DEFAULT_PREFIX}), storm-kinesis's zkNode
        (required); --source-topology: the awslabs spout's topology name (required for it); --source-stream: default
        the configured stream. Prints the plan; --dry-run stops there; asks for "yes" (--yes: do not ask; required
        without a terminal); refuses while a lease is held; never moves a checkpoint it finds unless --overwrite.
        --from kcl: a KCL 1.x/2.x/3.x lease table in DynamoDB (--source-endpoint: not AWS's); refuses while a KCL
        lease is renewed within --source-failover-ms (default ${KCL_DEFAULT_FAILOVER_MS}, KCL's failoverTimeMillis);
        --source-timestamp: KCL's configured AT_TIMESTAMP, for leases holding that sentinel.
export  writes a KCL 2.x/3.x lease table from this application's checkpoints (--create-table: create it if
        absent); prints the plan; --dry-run stops there; refuses while a lease is held; --overwrite replaces
        leases whose checkpoint differs.
deregister-consumer  deregisters the fan-out stream consumer (consumerArn, consumerName or applicationName),
        which the spout never does; asks for "yes" (--yes: do not ask). Stop the topology first.

Exit codes: 0 done; 1 ZooKeeper/Kinesis failure; 2 bad argument or configuration; 3 no such application;
            4 reset/import refused: a lease is held; 5 not confirmed; 6 state changed, nothing written;
            7 status printed a PROBLEM line (without --watch).`;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export function parseTarget(text: string): ResetTarget {
  const upper = text.toUpperCase();
  if (upper === 'TRIM_HORIZON' || upper === 'LATEST') return { kind: upper };
  if (/^\d+$/.test(text)) return { kind: 'AFTER', sequenceNumber: text.replace(/^0+(?=\d)/, '') };
  const timestampMs = ISO_8601.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(timestampMs)) {
    throw usageError(
      `--to ${JSON.stringify(text)}: allowed: TRIM_HORIZON, LATEST, an ISO-8601 timestamp (e.g. 2026-12-01T04:00:00Z) or a sequence number (digits)`,
    );
  }
  return { kind: 'AT_TIMESTAMP', timestampMs, text };
}

function parseShards(text: string): string[] {
  const shards = text.split(',').map((s) => s.trim());
  if (shards.some((s) => !/^[A-Za-z0-9_.-]+$/.test(s)))
    throw usageError(
      `--shards ${JSON.stringify(text)}: expected shard ids separated by commas, e.g. shardId-000000000000,shardId-000000000001`,
    );
  return [...new Set(shards)];
}

const FLAGS = {
  status: ['--config', '--stream', '--json', '--watch'],
  reset: ['--config', '--stream', '--to', '--shards', '--force', '--yes'],
  'deregister-consumer': ['--config', '--stream', '--yes'],
  import: [
    '--config',
    '--stream',
    '--from',
    '--source-zookeeper',
    '--source-root',
    '--source-topology',
    '--source-stream',
    '--source-table',
    '--source-endpoint',
    '--source-failover-ms',
    '--source-timestamp',
    '--dry-run',
    '--overwrite',
    '--yes',
  ],
  export: [
    '--config',
    '--stream',
    '--to',
    '--table',
    '--endpoint',
    '--create-table',
    '--multi-stream-account',
    '--failover-ms',
    '--dry-run',
    '--overwrite',
    '--yes',
  ],
} as const;

const VALUE_FLAGS = new Set([
  '--config',
  '--stream',
  '--to',
  '--shards',
  '--from',
  '--source-zookeeper',
  '--source-root',
  '--source-topology',
  '--source-stream',
  '--source-table',
  '--source-endpoint',
  '--source-failover-ms',
  '--source-timestamp',
  '--table',
  '--endpoint',
  '--multi-stream-account',
  '--failover-ms',
]);

/** Refuses a value after any of `switches` (flags that are there or not). */
function switchesOf(tool: string, values: ReadonlyMap<string, string | true>, switches: readonly string[]): void {
  for (const flag of switches)
    if (values.has(flag) && values.get(flag) !== true) throw usageError(`${tool}: ${flag} takes no value`);
}

/** A reader of flags that take a value: the value, or undefined when the flag is not there (an empty one refused). */
function textOf(tool: string, values: ReadonlyMap<string, string | true>): (flag: string) => string | undefined {
  return (flag) => {
    const value = values.get(flag);
    if (value === '') throw usageError(`${tool}: ${flag} needs a value`);
    return typeof value === 'string' ? value : undefined;
  };
}

function importCommand(
  config: string,
  stream: { stream?: string },
  values: ReadonlyMap<string, string | true>,
): ToolCommand {
  switchesOf('import', values, ['--dry-run', '--overwrite', '--yes']);
  const text = textOf('import', values);
  const from = text('--from');
  if (from === 'kcl') return kclImportCommand(config, stream, values, text);
  for (const flag of ['--source-table', '--source-endpoint', '--source-failover-ms', '--source-timestamp'])
    if (values.has(flag)) throw usageError(`import: ${flag} is for --from kcl`);
  if (!(SOURCES as readonly string[]).includes(from ?? ''))
    throw usageError(
      `import: --from ${SOURCES.join('|')}|kcl is required${from ? ` (not ${JSON.stringify(from)})` : ''}`,
    );
  const kind = from as SourceKind;
  const zookeeper = text('--source-zookeeper');
  if (!zookeeper)
    throw usageError("import: --source-zookeeper <host:port,...> (the old spout's ZooKeeper) is required");
  const topology = text('--source-topology');
  let root = text('--source-root');
  if (kind === 'awslabs-storm-spout') {
    if (!topology)
      throw usageError(
        "import: --source-topology <name> is required with awslabs-storm-spout (its paths hold the topology's name)",
      );
    root ??= AWSLABS_DEFAULT_PREFIX;
  } else {
    if (topology !== undefined)
      throw usageError(
        'import: --source-topology is for awslabs-storm-spout; storm-kinesis paths hold no topology name',
      );
    if (!root) throw usageError("import: --source-root <zkNode> is required with storm-kinesis (its ZkInfo's zkNode)");
  }
  const sourceStream = text('--source-stream');
  return {
    tool: 'import',
    config,
    ...stream,
    source: {
      from: kind,
      zookeeper,
      root,
      ...(topology !== undefined && { topology }),
      ...(sourceStream !== undefined && { stream: sourceStream }),
    },
    dryRun: values.has('--dry-run'),
    overwrite: values.has('--overwrite'),
    yes: values.has('--yes'),
  };
}

function milliseconds(tool: string, flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!/^\d+$/.test(value) || ms > 600_000)
    throw usageError(`${tool}: ${flag} ${JSON.stringify(value)}: milliseconds, a whole number from 0 to 600000`);
  return ms;
}

function kclImportCommand(
  config: string,
  stream: { stream?: string },
  values: ReadonlyMap<string, string | true>,
  text: (flag: string) => string | undefined,
): ToolCommand {
  for (const flag of ['--source-zookeeper', '--source-root', '--source-topology'])
    if (values.has(flag)) throw usageError(`import: ${flag} is for the ZooKeeper sources, not --from kcl`);
  const table = text('--source-table');
  if (!table)
    throw usageError("import: --source-table <name> (KCL's lease table; by default its applicationName) is required");
  const stamp = text('--source-timestamp');
  const timestampMs = stamp === undefined ? undefined : parseTarget(stamp);
  if (timestampMs !== undefined && timestampMs.kind !== 'AT_TIMESTAMP')
    throw usageError(
      `import: --source-timestamp ${JSON.stringify(stamp)}: an ISO-8601 timestamp, e.g. 2026-12-01T04:00:00Z`,
    );
  const endpoint = text('--source-endpoint');
  const sourceStream = text('--source-stream');
  return {
    tool: 'import',
    config,
    ...stream,
    source: {
      from: 'kcl',
      table,
      failoverMs:
        milliseconds('import', '--source-failover-ms', text('--source-failover-ms')) ?? KCL_DEFAULT_FAILOVER_MS,
      ...(endpoint !== undefined && { endpoint }),
      ...(timestampMs?.kind === 'AT_TIMESTAMP' && { timestampMs: timestampMs.timestampMs }),
      ...(sourceStream !== undefined && { stream: sourceStream }),
    },
    dryRun: values.has('--dry-run'),
    overwrite: values.has('--overwrite'),
    yes: values.has('--yes'),
  };
}

function exportCommand(
  config: string,
  stream: { stream?: string },
  values: ReadonlyMap<string, string | true>,
): ToolCommand {
  switchesOf('export', values, ['--dry-run', '--overwrite', '--yes', '--create-table']);
  const text = textOf('export', values);
  const to = text('--to');
  if (to !== 'kcl') throw usageError(`export: --to kcl is required${to ? ` (not ${JSON.stringify(to)})` : ''}`);
  const table = text('--table');
  if (!table)
    throw usageError("export: --table <name> (KCL's lease table; by default its applicationName) is required");
  const account = text('--multi-stream-account');
  if (account !== undefined && !/^\d{12}$/.test(account))
    throw usageError(`export: --multi-stream-account ${JSON.stringify(account)}: a 12-digit AWS account id`);
  const endpoint = text('--endpoint');
  const failoverMs = milliseconds('export', '--failover-ms', text('--failover-ms'));
  return {
    tool: 'export',
    config,
    ...stream,
    table,
    ...(endpoint !== undefined && { endpoint }),
    ...(account !== undefined && { multiStreamAccount: account }),
    ...(failoverMs !== undefined && { failoverMs }),
    createTable: values.has('--create-table'),
    dryRun: values.has('--dry-run'),
    overwrite: values.has('--overwrite'),
    yes: values.has('--yes'),
  };
}

/** Parses the arguments after the tool's name (`status`, `reset` or `deregister-consumer`). */
export function parseToolArgs(tool: keyof typeof FLAGS, args: readonly string[]): ToolCommand {
  const values = new Map<string, string | true>();
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--help' || arg === '-h') return { tool: 'help' };
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    if (!(FLAGS[tool] as readonly string[]).includes(flag)) {
      throw usageError(`${tool}: unknown argument ${JSON.stringify(arg)}; allowed: ${FLAGS[tool].join(', ')}`);
    }
    if (values.has(flag)) throw usageError(`${tool}: ${flag} given twice`);
    const takesValue = VALUE_FLAGS.has(flag);
    const next = args[i + 1];
    if (inline !== undefined) values.set(flag, inline);
    else if (takesValue) {
      if (next === undefined || next.startsWith('--')) throw usageError(`${tool}: ${flag} needs a value`);
      values.set(flag, next);
      i += 1;
    } else if (flag === '--watch' && next !== undefined && !next.startsWith('--')) {
      values.set(flag, next);
      i += 1;
    } else values.set(flag, true);
  }
  const config = values.get('--config');
  if (typeof config !== 'string' || config === '') throw usageError(`${tool}: --config <file.json> is required`);
  const streamArg = values.get('--stream');
  if (streamArg === '') throw usageError(`${tool}: --stream needs a value`);
  const stream = typeof streamArg === 'string' ? { stream: streamArg } : {};
  if (tool === 'status') {
    const watch = values.get('--watch');
    let watchSeconds: number | undefined;
    if (watch === true) watchSeconds = DEFAULT_WATCH_SECONDS;
    else if (typeof watch === 'string') {
      watchSeconds = Number(watch);
      if (!Number.isFinite(watchSeconds) || watchSeconds < 1 || watchSeconds > 3600)
        throw usageError(`status: --watch ${JSON.stringify(watch)}: seconds between redraws, from 1 to 3600`);
    }
    switchesOf(tool, values, ['--json']);
    return { tool, config, ...stream, json: values.has('--json'), watchSeconds };
  }
  if (tool === 'deregister-consumer') {
    switchesOf(tool, values, ['--yes']);
    return { tool, config, ...stream, yes: values.has('--yes') };
  }
  if (tool === 'import') return importCommand(config, stream, values);
  if (tool === 'export') return exportCommand(config, stream, values);
  const to = values.get('--to');
  if (typeof to !== 'string')
    throw usageError('reset: --to TRIM_HORIZON|LATEST|<ISO-8601 timestamp>|<sequence number> is required');
  switchesOf('reset', values, ['--force', '--yes']);
  const shards = values.get('--shards');
  return {
    tool,
    config,
    ...stream,
    to: parseTarget(to),
    shards: typeof shards === 'string' ? parseShards(shards) : undefined,
    force: values.has('--force'),
    yes: values.has('--yes'),
  };
}
