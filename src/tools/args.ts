/** The tools' command lines, parsed into what each tool was asked to do (pure: no file, no clock). */
import { usageError } from './exitCodes';
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
  | { tool: 'deregister-consumer'; config: string; stream?: string; yes: boolean };

export const DEFAULT_WATCH_SECONDS = 5;

export const USAGE = `Usage:
  kinesis-spout status --config <file.json> [--stream <name>] [--json] [--watch [seconds]]
  kinesis-spout reset  --config <file.json> [--stream <name>] --to TRIM_HORIZON|LATEST|<ISO-8601 timestamp>|<sequence number>
                       [--shards id,id,...] [--force] [--yes]
  kinesis-spout deregister-consumer --config <file.json> [--stream <name>] [--yes]

<file.json> holds the spout's "kinesis.spout" map, or a topology conf with a "kinesis.spout" key
(and optionally topology.name, storm.zookeeper.servers, storm.zookeeper.port,
storm.zookeeper.topology.auth.scheme/payload).

--stream  with a configuration of several streams ("streams"): the one to look at (by name, or its ARN's tail);
        required by reset and deregister-consumer, status shows every stream without it.
status  per shard: state, parents, owner, checkpoint, lag; --watch redraws every ${DEFAULT_WATCH_SECONDS} s (or as given) until Ctrl-C.
reset   moves checkpoints (of every shard, or of --shards and their descendants); prints the plan and asks
        for "yes" (--yes: do not ask); refuses while a lease is held unless --force.
deregister-consumer  deregisters the fan-out stream consumer (consumerArn, consumerName or applicationName),
        which the spout never does; asks for "yes" (--yes: do not ask). Stop the topology first.

Exit codes: 0 done; 1 ZooKeeper/Kinesis failure; 2 bad argument or configuration; 3 no such application;
            4 reset refused: a lease is held; 5 reset not confirmed; 6 reset: state changed, nothing written;
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
} as const;

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
    const takesValue = flag === '--config' || flag === '--stream' || flag === '--to' || flag === '--shards';
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
    if (values.get('--json') !== undefined && values.get('--json') !== true)
      throw usageError('status: --json takes no value');
    return { tool, config, ...stream, json: values.has('--json'), watchSeconds };
  }
  if (tool === 'deregister-consumer') {
    if (values.has('--yes') && values.get('--yes') !== true) throw usageError(`${tool}: --yes takes no value`);
    return { tool, config, ...stream, yes: values.has('--yes') };
  }
  const to = values.get('--to');
  if (typeof to !== 'string')
    throw usageError('reset: --to TRIM_HORIZON|LATEST|<ISO-8601 timestamp>|<sequence number> is required');
  for (const flag of ['--force', '--yes'] as const)
    if (values.has(flag) && values.get(flag) !== true) throw usageError(`reset: ${flag} takes no value`);
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
