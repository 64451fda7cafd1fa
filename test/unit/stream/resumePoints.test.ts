import type { Bootstrap } from '../../../src/core/position';
import { initialPositionNote, resumePointsLine } from '../../../src/stream/resumePoints';

const bootstrap: Bootstrap = {
  v: 1,
  firstStartMs: Date.parse('2026-01-02T03:04:05Z'),
  initialPosition: 'LATEST',
  streamArn: 'arn',
  streamCreatedMs: 0,
  shardsAtStart: [],
  openAtStart: [],
};

describe('where shards resume', () => {
  it('names each shard with its checkpoint, or the start a shard without one gets, and counts the finished', () => {
    const line = resumePointsLine(
      [
        { shardId: 'shardId-1', kind: 'checkpoint', position: { kind: 'AFTER', sequenceNumber: '42' } },
        {
          shardId: 'shardId-2',
          kind: 'start',
          position: { kind: 'AT_TIMESTAMP', timestampMs: bootstrap.firstStartMs },
        },
      ],
      3,
    );
    expect(line).toBe(
      'where shards resume: shardId-1 resumes from its checkpoint (after 42); shardId-2 has no checkpoint: starts at 2026-01-02T03:04:05.000Z; 3 shard(s) finished (SHARD_END)',
    );
  });

  it('counts what it does not list', () => {
    const points = Array.from({ length: 105 }, (_, i) => ({
      shardId: `s${i}`,
      kind: 'start' as const,
      position: { kind: 'TRIM_HORIZON' as const },
    }));
    expect(resumePointsLine(points, 0)).toMatch(/s99 has no checkpoint: starts TRIM_HORIZON; and 5 more$/);
  });

  it('says initialPosition applied only to the first start, and that a changed one has no effect', () => {
    expect(initialPositionNote(bootstrap, 'LATEST', '/r/a/s')).toMatch(
      /^initialPosition applies only to the application's first start: it started 2026-01-02T03:04:05.000Z with LATEST \(recorded in \/r\/a\/s\/bootstrap\)\. .*TRIM_HORIZON\.$/,
    );
    expect(initialPositionNote(bootstrap, 'TRIM_HORIZON', '/r/a/s')).toMatch(
      /The configuration now says TRIM_HORIZON: that has no effect on this application/,
    );
  });
});
