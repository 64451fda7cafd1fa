/** Loads, defaults and validates the `kinesis.spout` configuration; a bad value gets one clear message. */
import type { FromSchema } from 'json-schema-to-ts';
import { readFileSync } from 'node:fs';
import { ErrorCode, SpoutError } from '../errors';
import { badConfig, CONF_KEY, explain, type ObjectSchema, unknownKey } from './explain';
import { configSchema } from './schema';
import { validateConfigSchema as validate } from './schemaValidator';
import { AuthSource, stormTopologyAuth, stormZooKeeperConnect, type ZooKeeperAuth } from './stormZooKeeper';

import type { InitialPosition } from '../core/position';
import { isObject } from '../core/json';

export type { InitialPosition };

/** What the schema admits once ajv has filled its defaults (a key with a default is always there). */
type Validated = FromSchema<Omit<typeof configSchema, 'oneOf'>>;

/**
 * The configuration the spout runs with: derived from the schema (schema.ts), so a new key is one schema
 * entry; what the schema cannot say is added here: the keys the topology conf fills (applicationName,
 * zookeeper.connect and auth), and where the settings came from.
 */
export interface SpoutConfig extends Omit<Validated, 'applicationName' | 'zookeeper' | 'streams'> {
  applicationName: string;
  zookeeper: Omit<Validated['zookeeper'], 'connect' | 'auth'> & {
    connect: string;
    /** Credentials the session authenticates with (digest). */
    auth?: ZooKeeperAuth;
    /** True when nodes below `root` are created readable and writable only by `auth`. */
    creatorOnly: boolean;
  };
  /** Where the settings an operator must know about came from (logged at start; the secrets never are). */
  origins: ConfigOrigins;
  /** Several streams (`streams`), as given; `streamConfigs` resolves them. Absent in a stream's own configuration. */
  streams?: StreamEntry[];
  /** In a stream's own configuration (streamConfigs): its index in `streams`. */
  streamIndex?: number;
}

/** One entry of `streams`: which stream, and what it sets for itself (the rest is the top level's). */
export type StreamEntry = NonNullable<Validated['streams']>[number];

/** When a child shard may be read (schema: `ordering`). */
export type Ordering = SpoutConfig['ordering'];

/** What a crash may cost (schema: `delivery`). */
export type Delivery = SpoutConfig['delivery'];

export interface ConfigOrigins {
  applicationName: 'kinesis.spout.applicationName' | 'topology.name';
  zookeeperConnect: 'kinesis.spout.zookeeper.connect' | 'storm.zookeeper.servers';
  zookeeperAuth: AuthSource;
}

/** What the topology conf supplies where `kinesis.spout` is silent. */
export interface StormDefaults {
  topologyName?: string;
  zookeeperConnect?: string;
  auth?: { auth?: ZooKeeperAuth; creatorOnly: boolean; source: AuthSource };
}

/**
 * Builds the configuration from the topology conf (key `kinesis.spout`), optionally merged over a JSON file.
 * Throws a BAD_CONFIG SpoutError naming the key, the value and what is allowed.
 */
export function loadConfig(stormConf: Record<string, unknown>, file?: string): SpoutConfig {
  let base: Record<string, unknown> = {};
  if (file !== undefined) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (!isObject(parsed)) throw new Error('not a JSON object');
      base = parsed;
    } catch (err) {
      throw new SpoutError(ErrorCode.BadConfig, `bad configuration file ${file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  const fromConf = stormConf[CONF_KEY];
  if (fromConf !== undefined && !isObject(fromConf)) throw badConfig(CONF_KEY, fromConf, 'must be a JSON object');
  const merged = mergeDeep(base, fromConf ?? {});
  const topologyName = stormConf['topology.name'];
  // Storm's ZooKeeper settings are read only where the spout falls back on them: a spout given its own
  // ensemble and credentials runs beside a Storm whose own are SASL, or IPv6 hosts.
  const own = isObject(merged.zookeeper) ? merged.zookeeper : {};
  return validateConfig(merged, {
    topologyName: typeof topologyName === 'string' ? topologyName : undefined,
    zookeeperConnect: own.connect === undefined ? stormZooKeeperConnect(stormConf) : undefined,
    auth: own.auth === undefined ? stormTopologyAuth(stormConf) : undefined,
  });
}

/** Validates `kinesis.spout` (merged) and fills what it leaves to the topology conf from `storm`. */
export function validateConfig(raw: Record<string, unknown>, storm: StormDefaults = {}): SpoutConfig {
  const config = structuredClone(raw);
  if (!validate(config))
    throw unknownKey(configSchema as ObjectSchema, config, '') ?? explain(validate.errors![0], config);
  const valid = config as unknown as SpoutConfig;
  const origins: ConfigOrigins = {
    applicationName: valid.applicationName === undefined ? 'topology.name' : 'kinesis.spout.applicationName',
    zookeeperConnect:
      valid.zookeeper.connect === undefined ? 'storm.zookeeper.servers' : 'kinesis.spout.zookeeper.connect',
    zookeeperAuth: valid.zookeeper.auth ? AuthSource.Spout : (storm.auth?.source ?? AuthSource.None),
  };
  valid.origins = origins;
  valid.applicationName ??= storm.topologyName!;
  if (valid.applicationName === undefined) {
    throw badConfig(
      `${CONF_KEY}.applicationName`,
      undefined,
      'is required when the topology conf has no topology.name',
    );
  }
  valid.zookeeper.connect ??= storm.zookeeperConnect!;
  if (valid.zookeeper.connect === undefined) {
    throw badConfig(
      `${CONF_KEY}.zookeeper.connect`,
      undefined,
      'is required when the topology conf has no storm.zookeeper.servers',
    );
  }
  if (valid.zookeeper.auth) valid.zookeeper.creatorOnly = true;
  else {
    valid.zookeeper.auth = storm.auth?.auth;
    valid.zookeeper.creatorOnly = storm.auth?.creatorOnly ?? false;
  }
  checkPosition(valid.initialPosition, 'initialPosition');
  if (valid.streams && valid.consumerArn !== undefined)
    throw badConfig(
      `${CONF_KEY}.consumerArn`,
      valid.consumerArn,
      'a consumer belongs to one stream: with streams, give consumerArn in the entry of its stream',
    );
  checkConsumer(valid);
  checkDelivery(valid, raw);
  checkStreams(valid);
  if (valid.retry.maxBackoffMs < valid.retry.initialBackoffMs) {
    throw badConfig(
      `${CONF_KEY}.retry.maxBackoffMs`,
      valid.retry.maxBackoffMs,
      `must be >= retry.initialBackoffMs (${valid.retry.initialBackoffMs})`,
    );
  }
  return valid;
}

function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? mergeDeep(current, value) : value;
  }
  return out;
}

/** The stream's name, from `streamName` or the tail of `streamArn`. */
export function streamNameOf(config: Pick<SpoutConfig, 'streamName' | 'streamArn'>): string {
  return config.streamName ?? config.streamArn!.split('/').pop()!;
}

function checkPosition(position: InitialPosition, key: string): void {
  if (typeof position === 'object' && Number.isNaN(Date.parse(position.atTimestamp))) {
    throw badConfig(`${CONF_KEY}.${key}.atTimestamp`, position.atTimestamp, 'must be an ISO-8601 date-time');
  }
}

/**
 * The configuration of each stream the spout reads, in order: the configuration itself for one stream
 * (`streamName`/`streamArn`), else one per entry of `streams`, the entry's keys over the top level's, the
 * memory caps split evenly (the caps are the process's, whatever the number of streams). Pure.
 */
export function streamConfigs(config: SpoutConfig): SpoutConfig[] {
  const entries = config.streams;
  if (!entries) return [config];
  const n = entries.length;
  return entries.map((entry, streamIndex) => {
    const { streams: _all, streamName: _name, streamArn: _arn, ...shared } = config;
    const own: SpoutConfig = {
      ...shared,
      region: entry.region ?? config.region,
      initialPosition: entry.initialPosition ?? config.initialPosition,
      outputStream: entry.outputStream ?? config.outputStream,
      maxRecordsInMemory: Math.max(1, Math.floor(config.maxRecordsInMemory / n)),
      maxBytesInMemory: Math.max(1, Math.floor(config.maxBytesInMemory / n)),
      streamIndex,
    };
    if (entry.streamName !== undefined) own.streamName = entry.streamName;
    if (entry.streamArn !== undefined) own.streamArn = entry.streamArn;
    if (entry.consumerArn !== undefined) {
      own.consumerArn = entry.consumerArn;
      delete own.consumerName;
    }
    return own;
  });
}

/**
 * Each stream's output stream apart from the dead letters'; with `streams`, what they must hold beyond the
 * schema: distinct state paths, and each entry's own checks.
 */
function checkStreams(valid: SpoutConfig): void {
  const seen = new Map<string, number>();
  streamConfigs(valid).forEach((own, i) => {
    if (valid.retry.onExhausted === 'deadLetter' && valid.retry.deadLetterStream === own.outputStream)
      throw badConfig(
        `${CONF_KEY}.retry.deadLetterStream`,
        valid.retry.deadLetterStream,
        `must differ from ${valid.streams ? `the outputStream of streams[${i}] (${streamNameOf(own)})` : 'outputStream'}: dead letters carry two more fields than the tuples`,
      );
    const entry = valid.streams?.[i];
    if (!entry) return;
    const at = `streams[${i}]`;
    const name = streamNameOf(own);
    const first = seen.get(name);
    if (first !== undefined)
      throw badConfig(
        `${CONF_KEY}.${at}.${entry.streamName !== undefined ? 'streamName' : 'streamArn'}`,
        entry.streamName ?? entry.streamArn,
        `names stream ${name} as streams[${first}] does: each stream's state lives under <root>/<applicationName>/<streamName>/, so a stream is listed once (two regions' streams of one name cannot be read by one component)`,
      );
    seen.set(name, i);
    if (entry.initialPosition !== undefined) checkPosition(entry.initialPosition, `${at}.initialPosition`);
    if (entry.consumerArn !== undefined) {
      if (valid.readMode !== 'fanOut')
        throw badConfig(
          `${CONF_KEY}.${at}.consumerArn`,
          entry.consumerArn,
          'applies only with readMode "fanOut": remove it or set readMode',
        );
      checkConsumerOf(own, entry.consumerArn, `${at}.consumerArn`);
    }
  });
}

/** The consumer's ARN must name the stream it is given for. */
function checkConsumerOf(stream: Pick<SpoutConfig, 'streamName' | 'streamArn'>, arn: string, key: string): void {
  if (stream.streamArn !== undefined && !arn.startsWith(`${stream.streamArn}/consumer/`))
    throw badConfig(`${CONF_KEY}.${key}`, arn, `must be a consumer of streamArn ${stream.streamArn}`);
  const name = /:stream\/([^/]+)\/consumer\//.exec(arn)?.[1];
  if (stream.streamName !== undefined && name !== stream.streamName)
    throw badConfig(`${CONF_KEY}.${key}`, arn, `must be a consumer of stream ${stream.streamName}`);
}

/** `tupleTracking` and `retry` only where they mean something: at-least-once always tracks and replays; the others never replay. */
function checkDelivery(valid: SpoutConfig, raw: Record<string, unknown>): void {
  if (valid.delivery === 'at-least-once') {
    if (raw.tupleTracking !== undefined)
      throw badConfig(
        `${CONF_KEY}.tupleTracking`,
        raw.tupleTracking,
        'applies only with delivery "at-most-once" or "none" (at-least-once always tracks tuples): remove it or set delivery',
      );
    return;
  }
  if (raw.retry !== undefined)
    throw badConfig(
      `${CONF_KEY}.retry`,
      raw.retry,
      `applies only with delivery "at-least-once": with "${valid.delivery}" a failed tuple is never re-emitted nor dead-lettered; remove it or set delivery`,
    );
}

/** Fan-out's consumer: named (default: the application's name) or given by ARN, and only with `readMode: "fanOut"`. */
function checkConsumer(valid: SpoutConfig): void {
  for (const key of ['consumerName', 'consumerArn'] as const) {
    if (valid.readMode !== 'fanOut' && valid[key] !== undefined)
      throw badConfig(
        `${CONF_KEY}.${key}`,
        valid[key],
        'applies only with readMode "fanOut": remove it or set readMode',
      );
  }
  if (valid.readMode !== 'fanOut') return;
  const arn = valid.consumerArn;
  if (arn !== undefined) {
    if (valid.consumerName !== undefined)
      throw badConfig(`${CONF_KEY}.consumerName`, valid.consumerName, 'give consumerName or consumerArn, not both');
    checkConsumerOf(valid, arn, 'consumerArn');
    return;
  }
  if (valid.consumerName === undefined) {
    if (valid.applicationName.length > 128)
      throw badConfig(
        `${CONF_KEY}.consumerName`,
        undefined,
        `is required: the default, applicationName, is longer than a consumer name may be (128 characters)`,
      );
    valid.consumerName = valid.applicationName;
  }
}
