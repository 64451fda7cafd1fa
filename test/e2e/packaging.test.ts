/**
 * What users get: the npm package ships the bin the README announces and the licenses of what the bundle
 * contains; the Maven module's jar (built, unit-tested and installed here) carries the same bundle and
 * licenses.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mavenInstallModule, REPO, SPOUT_DYNAMODB, SPOUT_SCRIPT } from './helpers/maven';

const NOTICES = join(REPO, 'multilang/resources/kinesis-spout.THIRD-PARTY-LICENSES.txt');
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  dependencies: Record<string, string>;
};

test("npm pack ships the bin, the KCL tools' DynamoDB client beside it, and the third-party licenses", () => {
  // --ignore-scripts: the bundle is already built (prepack would build it again).
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO, encoding: 'utf8' }),
  ) as { files: { path: string }[] }[];
  const files = packed.files.map((f) => f.path);
  expect(files).toEqual(
    expect.arrayContaining([
      pkg.bin['kinesis-spout'],
      'multilang/resources/kinesis-spout-dynamodb.cjs',
      'multilang/resources/kinesis-spout.THIRD-PARTY-LICENSES.txt',
    ]),
  );
  expect(pkg.bin['kinesis-spout']).toBe('multilang/resources/kinesis-spout.cjs');
});

test('the licenses name every runtime dependency at its installed version, with its license text', () => {
  const notices = readFileSync(NOTICES, 'utf8');
  for (const name of Object.keys(pkg.dependencies)) {
    const { version, license } = JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
      license: string;
    };
    expect(notices).toContain(`\n${name} ${version}\nLicense: ${license}\n`);
  }
  expect(notices).toMatch(/Apache License\s+Version 2\.0/);
  expect(notices).toMatch(/Permission is hereby granted, free of charge/); // MIT (ajv, node-zookeeper-client's dependencies)
});

test(
  'the module jar carries the bundle as resources/kinesis-spout.cjs, the DynamoDB client beside it, and the licenses',
  async () => {
    const jar = await mavenInstallModule();
    const entry = (path: string) => execFileSync('unzip', ['-p', jar, path], { maxBuffer: 64 * 1024 * 1024 });
    expect(entry('resources/kinesis-spout.cjs').equals(readFileSync(SPOUT_SCRIPT))).toBe(true);
    expect(entry('resources/kinesis-spout-dynamodb.cjs').equals(readFileSync(SPOUT_DYNAMODB))).toBe(true);
    expect(entry('META-INF/kinesis-spout.THIRD-PARTY-LICENSES.txt').equals(readFileSync(NOTICES))).toBe(true);
  },
  15 * 60_000,
);
