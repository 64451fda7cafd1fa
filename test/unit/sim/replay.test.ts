/**
 * A failing simulation seed prints the command that replays it: that command's environment must give back
 * the plan the seed ran under, every knob of it, or the replay runs another simulation than the one that failed.
 */
import { replayCommand, type SeedPlan, seedPlan } from '../../sim/seeds';

/** The `NAME=value` words of a printed command, as the shell would put them in the environment. */
function envOf(command: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const word of command.split(' ')) {
    const match = /^(SIM_[A-Z_]+)=(.*)$/.exec(word);
    if (match) env[match[1]] = match[2];
  }
  return env;
}

describe('replayCommand', () => {
  it('replays a seed under the plan it ran with, every knob set', () => {
    const plan = seedPlan({
      SIM_FIRST_SEED: '7',
      SIM_WITHOUT: 'zkStall,kinesisThrottled',
      SIM_IGNORE: 'twice',
      SIM_MODE: 'chaos',
      SIM_BALANCE: 'throughput',
      SIM_READ_MODE: 'fanOut',
      SIM_DELIVERY: 'at-most-once',
      SIM_VERSIONS: 'none',
      SIM_CHECKPOINT_CAP: '3',
    });
    const replayed = seedPlan(envOf(replayCommand(12, plan)));
    const expected: SeedPlan = { ...plan, first: 12, count: 1, replay: true };
    expect(replayed).toEqual(expected);
  });

  it('names nothing that was left to its default', () => {
    expect(replayCommand(3, seedPlan({}))).toBe('SIM_SEED=3 npx jest test/sim/simulation.test.ts --maxWorkers=1');
  });
});
