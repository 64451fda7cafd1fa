/**
 * The bundle validates the configuration with the code ajv generated for the schema at build time, not with
 * ajv itself (scripts/build.mjs): a bad configuration must get there the message it gets from the source, where
 * ajv compiles the schema at run time. Read through `kinesis-spout status --config`, which reports a bad
 * configuration before it connects to anything.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config';
import { SpoutError } from '../../src/errors';
import { SPOUT_NODE } from '../helpers/spoutNode';
import { ENTRY_SCRIPT } from '../helpers/stormDriver';

const base = {
  region: 'us-east-1',
  streamName: 'orders',
  applicationName: 'app',
  zookeeper: { connect: '127.0.0.1:1' },
};
const STREAM_ARN = 'arn:aws:kinesis:us-east-1:123456789012:stream/orders';

/** One configuration for each way the schema can refuse one (a keyword, and where it sits). */
const BAD: Record<string, unknown>[] = [
  { ...base, unknownKey: 1 },
  { ...base, zookeeper: { connect: '127.0.0.1:1', port: 2181 } },
  { ...base, zookeeper: { connect: '127.0.0.1:1', auth: { scheme: 'digest' } } },
  { ...base, zookeeper: { connect: '127.0.0.1:1', auth: { scheme: 'digest', payload: 'no colon' } } },
  { ...base, zookeeper: { connect: '127.0.0.1:1', sessionTimeoutMs: 10 } },
  { ...base, zookeeper: { connect: '127.0.0.1:1', root: 'relative' } },
  { ...base, dataFormat: 'xml' },
  { ...base, region: 'us east 1' },
  { ...base, region: 7 },
  { ...base, streamName: '' },
  { ...base, streamName: 'x'.repeat(129) },
  { ...base, streamName: 'a/b' },
  { ...base, streamArn: STREAM_ARN },
  { region: 'us-east-1', applicationName: 'app' },
  { ...base, streamName: undefined, streamArn: 'arn:aws:kinesis:x' },
  { ...base, streamName: undefined, streams: [] },
  { ...base, streamName: undefined, streams: [{ region: 'us-east-1' }] },
  { ...base, streamName: undefined, streams: [{ streamName: 'a', streamArn: STREAM_ARN }] },
  { ...base, streamName: undefined, streams: [{ streamName: 'a', extra: true }] },
  { ...base, streamName: undefined, streams: [{ streamName: 'a', initialPosition: 'EARLIEST' }] },
  { ...base, initialPosition: 'EARLIEST' },
  { ...base, initialPosition: { atTimestamp: '' } },
  { ...base, initialPosition: { atTimestamp: '2026-01-01T00:00:00Z', extra: 1 } },
  { ...base, maxGetRecordsPerSecond: 0 },
  { ...base, maxGetRecordsPerSecond: 6 },
  { ...base, maxEmitPerNext: 1.5 },
  { ...base, maxEmitPerNext: '100' },
  { ...base, fastGetRecords: 'yes' },
  { ...base, outputFields: [] },
  { ...base, outputFields: ['data', 'data'] },
  { ...base, outputFields: ['data', 'body'] },
  { ...base, retry: { maxRetries: -2 } },
  { ...base, retry: { onExhausted: 'drop' } },
  { ...base, retry: 'always' },
  { ...base, endpoint: 'localhost:4567' },
  { ...base, assumeRoleArn: 'role' },
  { ...base, readMode: 'fanOut', consumerArn: 'arn:aws:kinesis:x' },
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bundled-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The message `loadConfig` (source, ajv at run time) throws for `raw`. */
function sourceMessage(raw: Record<string, unknown>): string {
  try {
    loadConfig({ 'kinesis.spout': raw });
  } catch (err) {
    if (err instanceof SpoutError) return err.message;
    throw err;
  }
  throw new Error(`${JSON.stringify(raw)} is valid: not a case for this test`);
}

/** What the bundle's `status --config` says about `raw`: its exit code and its line on stderr. */
function bundleSays(raw: Record<string, unknown>, i: number): Promise<{ code: number | null; message: string }> {
  const file = join(dir, `${i}.json`);
  writeFileSync(file, JSON.stringify(raw));
  return new Promise((resolve) => {
    execFile(SPOUT_NODE, [ENTRY_SCRIPT, 'status', '--config', file], { timeout: 60_000 }, (err, _stdout, stderr) => {
      const prefix = `kinesis-spout status: --config ${file}: `;
      const line = stderr.split('\n').find((l) => l.startsWith(prefix));
      resolve({
        code: err ? ((err as { code?: number }).code ?? null) : 0,
        message: line?.slice(prefix.length) ?? stderr,
      });
    });
  });
}

test('the bundle carries no ajv compiler', () => {
  const bundle = readFileSync(ENTRY_SCRIPT, 'utf8');
  expect(bundle).not.toMatch(/node_modules\/ajv\/dist\/(core|compile)/);
  expect(bundle).toMatch(/src\/config\/schemaValidator\.ts/);
});

test('every refusal of the schema reads in the bundle as it does from the source', async () => {
  const expected = BAD.map((raw) => ({ code: 2, message: sourceMessage(raw) }));
  const got = await Promise.all(BAD.map((raw, i) => bundleSays(raw, i)));
  expect(got).toEqual(expected);
  // The cases reach the schema's keywords, not only the checks after it.
  expect(new Set(expected.map((e) => e.message.replace(/^.*?: .*? = .*?: /, ''))).size).toBeGreaterThan(20);
});
