import {
  answersOnlySync,
  failureDue,
  failureReport,
  FAILED_REPEAT_MS,
  type Lifecycle,
} from '../../../src/cli/lifecycle';

describe('how the process answers Storm in each state', () => {
  it('only running serves commands; failed and stopping answer a bare sync', () => {
    const states: Lifecycle[] = [
      { kind: 'starting' },
      { kind: 'running' },
      { kind: 'failed', reason: 'x', reportedAt: 0 },
      { kind: 'stopping', why: 'SIGTERM' },
    ];
    expect(states.map(answersOnlySync)).toEqual([false, false, true, true]);
  });

  it('a failure is said again only after FAILED_REPEAT_MS', () => {
    const failed: Lifecycle = { kind: 'failed', reason: 'x', reportedAt: 1_000 };
    expect(failureDue(failed, 1_000 + FAILED_REPEAT_MS - 1)).toBe(false);
    expect(failureDue(failed, 1_000 + FAILED_REPEAT_MS)).toBe(true);
    expect(failureDue({ kind: 'running' }, 1e12)).toBe(false);
  });

  it('the report says what the task does now and what to do', () => {
    expect(failureReport('bad configuration: k = 1: nope')).toMatch(
      /^bad configuration: k = 1: nope\. This spout task emits nothing until the topology is redeployed with that fixed; it stays alive/,
    );
  });
});
