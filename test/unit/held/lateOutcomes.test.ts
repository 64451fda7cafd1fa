import { LateOutcomes } from '../../../src/held/lateOutcomes';
import { InFlight } from '../../../src/held/inFlight';

describe('LateOutcomes', () => {
  it('takes the first outcomes of an id for the emissions left out when the shard was let go', () => {
    const late = new LateOutcomes(100, 1_000);
    late.expect(['s:1', 's:2'], 0);
    late.expect(['s:1'], 10); // let go twice with s:1 out each time
    expect(late.consume('s:1', 20)).toBe(true);
    expect(late.consume('s:1', 20)).toBe(true);
    expect(late.consume('s:1', 20)).toBe(false); // the new emission's own outcome
    expect(late.consume('s:3', 20)).toBe(false);
    expect(late.size).toBe(1);
  });

  it('stops waiting after the wait and past the cap, oldest first', () => {
    const late = new LateOutcomes(2, 1_000);
    late.expect(['s:1'], 0);
    expect(late.consume('s:1', 1_001)).toBe(false);
    late.expect(['a', 'b', 'c'], 0);
    expect(late.size).toBe(2);
    expect(late.consume('a', 1)).toBe(false);
    expect(late.consume('c', 1)).toBe(true);
  });
});

describe('outstanding emissions', () => {
  it('a failed record waiting for its re-emit is owed no outcome; a re-emitted one is', () => {
    const inFlight = new InFlight<string>(() => 1);
    inFlight.add('1', 'a');
    inFlight.add('2', 'b');
    inFlight.failed('1', 0); // its outcome came
    expect([...inFlight.outstanding()]).toEqual(['2']);
    inFlight.ack('2');
    expect([...inFlight.outstanding()]).toEqual([]);
  });
});
