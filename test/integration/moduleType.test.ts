/**
 * Storm extracts the topology jar's resources/ folder somewhere under the worker's local dir, and Node
 * takes a `.js` file's module type from the nearest package.json above it: below a `"type": "module"`
 * one, a CommonJS bundle named `.js` dies at its first `require`. Named `.cjs`, it is CommonJS wherever
 * it sits.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStream, putRecords } from '../helpers/kinesisAdmin';
import { spoutSuite, uniqueName } from '../helpers/fixture';
import { ENTRY_SCRIPT } from '../helpers/stormDriver';

const suite = spoutSuite();
let project: string;

/** A Node project with `"type": "module"`, and a Storm local dir inside it, as on the cluster that showed it. */
beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'esm-project-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'some-esm-project', type: 'module' }));
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

function extractedAs(name: string): string {
  const resources = join(project, 'storm-local', 'supervisor', 'stormdist', 'topo-1-1', 'resources');
  mkdirSync(resources, { recursive: true });
  const script = join(resources, name);
  copyFileSync(ENTRY_SCRIPT, script);
  return script;
}

test('the bundle, below a package.json with "type": "module", handshakes and emits', async () => {
  const stream = uniqueName('stream');
  await createStream(suite.services.client, stream, 1);
  const put = await putRecords(suite.services.client, stream, [
    { partitionKey: 'k', data: 'hello' },
    { partitionKey: 'k', data: 'world' },
  ]);
  const driver = await suite.spout(stream, uniqueName('app'), {}, { script: extractedAs('kinesis-spout.cjs') });
  expect({ pid: driver.pid, stderr: driver.stderr.join('') }).toEqual({ pid: expect.any(Number), stderr: '' });
  expect(driver.pid).toBeGreaterThan(0);
  await driver.pump(() => driver.emits.length >= put.length);
  expect(driver.emits.map((e) => e.tuple[1])).toEqual(['hello', 'world']);
  expect(driver.errors).toEqual([]);
});

test('the same bundle named .js there dies at start: what the .cjs name prevents', async () => {
  const driver = await suite.spout(
    uniqueName('stream'),
    uniqueName('app'),
    {},
    { script: extractedAs('kinesis-spout.js') },
  );
  expect(driver.pid).toBe(-1);
  await driver.exited;
  expect(driver.stderr.join('')).toMatch(/require is not defined in ES module scope/);
});

// V8 holds the bundle's source for the life of the process: two bytes a character if one of them is not
// Latin-1 (4 MB instead of 2), so scripts/build.mjs escapes what esbuild leaves in comments.
test('the bundle is ASCII, so V8 holds its source as a one-byte string', () => {
  const source = readFileSync(ENTRY_SCRIPT);
  const outside = source.findIndex((byte) => byte > 0x7f);
  expect(outside < 0 ? 'ASCII' : source.subarray(Math.max(0, outside - 80), outside + 20).toString()).toBe('ASCII');
});
