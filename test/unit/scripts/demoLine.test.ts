import { demoLine } from '../../../scripts/demoLine';

describe("the demo's live line", () => {
  it('says the topology is starting while nothing is received, not just "received 0"', () => {
    expect(demoLine({ put: 300, received: 0, lag: 300 })).toMatch(
      /^put 300 {2}received 0 {2}lag 300 {2}\(waiting for the topology to start: LocalCluster takes about 10 s\)/,
    );
  });

  it('is the counts alone once records arrive, blanking what the longer line left', () => {
    const line = demoLine({ put: 3000, received: 2990, lag: 10 });
    expect(line.trimEnd()).toBe('put 3000  received 2990  lag 10');
    expect(line.length).toBeGreaterThanOrEqual(demoLine({ put: 300, received: 0, lag: 300 }).trimEnd().length);
  });
});
