/** Checks of the configuration against what the Storm topology declares and registers. */
import { ErrorCode, SpoutError } from '../errors';
import { streamConfigs, type SpoutConfig } from './config';
import { deadLetterExtraFields } from './schema';

/**
 * A field count that differs from the declared one would kill the worker at the first emit, and an emit on
 * an undeclared stream too: say so at start, for the output stream and, with dead letters, their stream.
 */
export function checkOutputFields(
  config: SpoutConfig,
  context: { 'stream->outputfields'?: Record<string, string[]> },
): void {
  const declared = context['stream->outputfields'];
  if (declared === undefined) return;
  const tuples = `kinesis.spout.outputFields = ${JSON.stringify(config.outputFields)}`;
  const outputStreams = new Set<string>();
  streamConfigs(config).forEach((own, i) => {
    if (outputStreams.has(own.outputStream)) return;
    outputStreams.add(own.outputStream);
    const key = config.streams?.[i].outputStream !== undefined ? `streams[${i}].outputStream` : 'outputStream';
    checkStream(declared, key, own.outputStream, config.outputFields, tuples);
  });
  const { retry } = config;
  if (retry.onExhausted === 'deadLetter') {
    const extra = deadLetterExtraFields(config);
    const fields = [...config.outputFields, ...extra];
    const letters = `kinesis.spout.retry.onExhausted = "deadLetter"${config.maxRecordAgeMs === undefined ? '' : ' with maxRecordAgeMs'}: dead letters carry the output fields then ${extra.join(', ')}, ${JSON.stringify(fields)}`;
    checkStream(declared, 'retry.deadLetterStream', retry.deadLetterStream, fields, letters);
  }
}

/** `why` names the keys the expected fields come from. */
function checkStream(
  declared: Record<string, string[]>,
  streamKey: string,
  stream: string,
  expected: readonly string[],
  why: string,
): void {
  const fields = declared[stream];
  if (fields === undefined) {
    throw new SpoutError(
      ErrorCode.BadConfig,
      `bad configuration: kinesis.spout.${streamKey} = ${JSON.stringify(stream)}: the topology declares no such stream for this spout (declared: ${Object.keys(declared).join(', ') || 'none'})`,
    );
  }
  if (fields.join(',') !== expected.join(',')) {
    throw new SpoutError(
      ErrorCode.BadConfig,
      `bad configuration: ${why}: must equal the fields the topology declares for stream "${stream}": ${JSON.stringify(fields)}`,
    );
  }
}

/** What Storm 2.6+ turns a JSON object or array in a tuple into (json-smart, shaded). */
export const JSON_SMART_CLASSES = [
  'org.apache.storm.shade.net.minidev.json.JSONObject',
  'org.apache.storm.shade.net.minidev.json.JSONArray',
];

/**
 * With `dataFormat: "json"`, a tuple sent to another worker goes through Kryo, which halts the worker for
 * an unregistered class, possibly long after start. Returns a warning when the classes are not registered.
 */
export function kryoWarning(config: SpoutConfig, stormConf: Record<string, unknown>): string | undefined {
  if (config.dataFormat !== 'json' || stormConf['topology.fall.back.on.java.serialization'] === true) return undefined;
  const registered = stormConf['topology.kryo.register'];
  const names = Array.isArray(registered)
    ? registered.flatMap((entry) =>
        typeof entry === 'string' ? [entry] : typeof entry === 'object' && entry !== null ? Object.keys(entry) : [],
      )
    : typeof registered === 'object' && registered !== null
      ? Object.keys(registered)
      : [];
  const missing = JSON_SMART_CLASSES.filter((name) => !names.includes(name));
  if (missing.length === 0) return undefined;
  return (
    `kinesis.spout.dataFormat = "json" puts JSON objects in tuples, and Storm's Kryo halts a worker that sends one to another worker unless ` +
    `topology.kryo.register lists ${missing.join(' and ')} (or topology.fall.back.on.java.serialization is true)`
  );
}
