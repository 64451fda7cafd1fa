/** Formats across releases (docs/zookeeper.md): every value names its release; a newer format is refused, naming both. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkpointRecordOf,
  checkpointValue,
  decode,
  endedValue,
  finishedValue,
  leaseOwnerOf,
  leaseValue,
  memberRecordOf,
  memberValue,
} from '../../../src/coordination/storedValues';
import { RELEASE } from '../../../src/core/release';

const json = (data: Buffer) => JSON.parse(data.toString('utf8')) as Record<string, unknown>;
const node = (value: object) => ({ data: Buffer.from(JSON.stringify(value)), version: 3 });

test("RELEASE is package.json's name and version", () => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as Record<string, string>;
  expect(RELEASE).toBe(`${pkg.name} ${pkg.version}`);
});

test('every value the spout writes names the release that wrote it', () => {
  for (const value of [
    checkpointValue({ kind: 'TRIM_HORIZON' }, 'me'),
    checkpointValue({ kind: 'AFTER', sequenceNumber: '1', subSequence: 2 }, 'me'),
    leaseValue('me', { bytesPerSec: 1, recordsPerSec: 1 }),
    finishedValue('9'),
    endedValue(),
    memberValue({ taskIndex: 1, host: 'h', pid: 2 }),
  ])
    expect(json(value).release).toBe(RELEASE);
});

test('a reader ignores fields it does not know: a newer release may add optional ones without raising v', () => {
  const extra = { addedLater: { anything: true } };
  expect(
    checkpointRecordOf('/c', node({ v: 1, position: { kind: 'TRIM_HORIZON' }, owner: 'x', ...extra })).position,
  ).toEqual({
    kind: 'TRIM_HORIZON',
  });
  expect(leaseOwnerOf('/l', Buffer.from(JSON.stringify({ v: 1, owner: 'x', ...extra })))).toBe('x');
  expect(memberRecordOf('m', '/m', Buffer.from(JSON.stringify({ v: 1, taskIndex: 2, ...extra }))).taskIndex).toBe(2);
});

test('a newer format is refused, naming the node, both versions and both releases, and what to run', () => {
  const newer = { v: 3, position: { kind: 'TRIM_HORIZON' }, release: 'kinesis-shell-spout 9.0.0' };
  expect(() => checkpointRecordOf('/app/s/checkpoints/a', node(newer))).toThrow(
    `ZooKeeper node /app/s/checkpoints/a has unsupported version 3 (expected {"v":1,...} or {"v":2,...}), written by kinesis-shell-spout 9.0.0; this is ${RELEASE}, which reads only the versions expected: run kinesis-shell-spout 9.0.0 or a newer release here`,
  );
});

test('a version that is no newer format (none, older, not a number) is corrupt: fix it by hand', () => {
  for (const v of [undefined, 0, '1'])
    expect(() => decode('/n', Buffer.from(JSON.stringify({ v, release: 'x' })))).toThrow(
      /: remove it or fix it by hand$/,
    );
});

test("a member node says its topology and state; an older release's node leaves them unknown", () => {
  const value = memberValue({ taskIndex: 1, host: 'h', pid: 2, topology: 'green-2-1', active: false, standby: true });
  expect(memberRecordOf('m', '/m', value)).toMatchObject({ topology: 'green-2-1', active: false, standby: true });
  const older = memberRecordOf('m', '/m', Buffer.from(JSON.stringify({ v: 1, taskIndex: 1, host: 'h', pid: 2 })));
  expect(older).toMatchObject({ topology: undefined, active: undefined, standby: undefined });
  const wrongTypes = Buffer.from(JSON.stringify({ v: 1, topology: 3, active: 'no', standby: 1 }));
  expect(memberRecordOf('m', '/m', wrongTypes)).toMatchObject({ topology: undefined, active: undefined });
});
