/**
 * What a configuration that the schema refuses means for the user: one message naming the key (its path,
 * `streams[1].outputFields`), the value as given (credentials hidden) and what is allowed, with the nearest
 * known key for an unknown one.
 */
import type { ErrorObject } from 'ajv';
import { isObject } from '../core/json';
import { ErrorCode, SpoutError } from '../errors';
import { nearest } from './nearest';
import { REGION_SHAPE } from './region';
import { configSchema } from './schema';

export const CONF_KEY = 'kinesis.spout';
const SECRET = 'zookeeper.auth';

export function badConfig(key: string, value: unknown, allowed: string): SpoutError {
  // Credentials are never shown, not even the wrong ones.
  const shown =
    value === undefined ? '(missing)' : key.startsWith(`${CONF_KEY}.${SECRET}`) ? '(hidden)' : JSON.stringify(value);
  return new SpoutError(ErrorCode.BadConfig, `bad configuration: ${key} = ${shown}: ${allowed}`);
}

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const part of pointer.split('/').slice(1))
    node = isObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[part] : undefined;
  return node;
}

/** `/streams/1/region` as a key: `streams[1].region`. */
function keyOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}

export function explain(error: ErrorObject, config: unknown): SpoutError {
  const path = keyOf(error.instancePath);
  const key = path === '' ? CONF_KEY : `${CONF_KEY}.${path}`;
  const value = valueAt(config, error.instancePath);
  const params = error.params as Record<string, unknown>;
  // The top level's initialPosition, or an entry's of `streams`.
  const position = /^((?:streams\[\d+\]\.)?initialPosition)(\.|$)/.exec(path);
  if (position && path !== `${position[1]}.atTimestamp`) {
    const pointer = error.instancePath.slice(
      0,
      error.instancePath.indexOf('initialPosition') + 'initialPosition'.length,
    );
    return badConfig(
      `${CONF_KEY}.${position[1]}`,
      valueAt(config, pointer),
      'allowed: "LATEST", "TRIM_HORIZON" or {"atTimestamp": "<ISO-8601>"}',
    );
  }
  const missing = params.missingProperty;
  const entry = /^streams\[\d+\]$/.test(path);
  if (entry && (error.keyword === 'oneOf' || missing === 'streamName' || missing === 'streamArn')) {
    return badConfig(
      `${key}.streamName`,
      valueAt(config, `${error.instancePath}/streamName`),
      'exactly one of streamName or streamArn is required in each entry of streams',
    );
  }
  if (path === '' && (error.keyword === 'oneOf' || missing === 'streamName' || missing === 'streamArn')) {
    const given = ['streamName', 'streamArn', 'streams'].filter((k) => isObject(config) && config[k] !== undefined);
    return badConfig(
      `${CONF_KEY}.${given.length > 1 ? given[given.length - 1] : 'streamName'}`,
      config === undefined
        ? undefined
        : valueAt(config, `/${given.length > 1 ? given[given.length - 1] : 'streamName'}`),
      given.length > 1
        ? `give exactly one of streamName, streamArn or streams (a list of streams), not ${given.join(' and ')}`
        : 'exactly one of streamName or streamArn is required (or streams: a list of streams)',
    );
  }
  if (/^(streams\[\d+\]\.)?region$/.test(path) && error.keyword === 'pattern')
    return badConfig(key, value, REGION_SHAPE);
  if (path === 'maxRecordAgeMs' && ['type', 'minimum', 'maximum'].includes(error.keyword))
    return badConfig(
      key,
      value,
      'must be whole milliseconds from 1000 (1 s; below that a caught-up shard polled once a second would skip records for the poll alone) to 31536000000 (365 days, the longest retention); leave it out for no limit',
    );
  switch (error.keyword) {
    case 'required':
      return badConfig(`${key}.${String(missing)}`, undefined, 'is required');
    case 'enum':
      return badConfig(
        key,
        value,
        `allowed: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      );
    default:
      return badConfig(key, value, error.message ?? 'not allowed');
  }
}

/** What unknownKey reads of a schema node. */
export interface ObjectSchema {
  properties?: Readonly<Record<string, ObjectSchema>>;
  additionalProperties?: boolean;
  items?: ObjectSchema;
  description?: string;
}

const TOP_LEVEL_KEYS = Object.keys(configSchema.properties);

/**
 * The first key the schema does not know, anywhere in the configuration, with the nearest known key. Looked
 * for before anything else: a misspelt `streamNme` is a typo to name, not a missing `streamName`.
 */
export function unknownKey(schema: ObjectSchema, value: unknown, pointer: string): SpoutError | undefined {
  if (Array.isArray(value) && schema.items) {
    for (const [i, item] of value.entries()) {
      const found = unknownKey(schema.items, item, `${pointer}/${i}`);
      if (found) return found;
    }
  }
  if (!isObject(value) || !schema.properties) return undefined;
  const known = Object.keys(schema.properties);
  for (const [name, child] of Object.entries(value)) {
    const childSchema = schema.properties[name];
    if (childSchema) {
      const found = unknownKey(childSchema, child, `${pointer}/${name}`);
      if (found) return found;
      continue;
    }
    if (schema.additionalProperties !== false) continue;
    const near = nearest(name, known);
    // In an entry of streams, a key of the top level (outputFields) is misplaced rather than misspelt.
    const nearTop = pointer === '' ? undefined : nearest(name, TOP_LEVEL_KEYS);
    const hint = near
      ? `did you mean ${near}? `
      : nearTop
        ? `${nearTop === name ? '' : `did you mean ${nearTop}? `}${nearTop} is a key of ${CONF_KEY} itself (for every stream), not of this entry; `
        : '';
    return badConfig(
      `${CONF_KEY}.${keyOf(`${pointer}/${name}`)}`,
      child,
      `unknown key; ${hint}allowed keys: ${known.join(', ')}`,
    );
  }
  return undefined;
}
