/**
 * The faults of faults.kinesis's flow with a split, per read mode: the HTTP fault proxy's on GetRecords for
 * polling; for fan-out the front's on the subscriptions, with the proxy (behind the front) failing what
 * still goes over HTTP/1.1.
 */
import type { FanOutServer } from './fanOutServer';
import type { Flow } from './flow';
import type { ReadMode } from './flowSuite';
import { type HttpFaultProxy, KinesisFault } from './httpFaultProxy';

/** A front's faults (fan-out) or none (polling): the mode's half of a scenario. */
type Front = FanOutServer | undefined;

/**
 * The faults of the flow with a split, per read mode: scattered ones from the start, bursts longer than
 * the SDK's attempts on two shards (three times), and what shows they reached the spout itself.
 */
export const FLOW_FAULTS: Record<
  ReadMode,
  {
    scatter(proxy: HttpFaultProxy, front: Front, open: string[]): void;
    burst(proxy: HttpFaultProxy, front: Front, open: string[]): void;
    reached(flow: Flow, proxy: HttpFaultProxy, front: Front): void;
  }
> = {
  polling: {
    scatter(proxy) {
      proxy.inject({ operations: ['GetRecords'], probability: 0.1, ...KinesisFault.Throttled });
      proxy.inject({ operations: ['GetRecords'], probability: 0.08, ...KinesisFault.ExpiredIterator });
      proxy.inject({
        operations: ['GetRecords', 'GetShardIterator', 'ListShards'],
        probability: 0.08,
        ...KinesisFault.InternalFailure,
      });
    },
    burst(proxy, _front, open) {
      proxy.inject({
        operations: ['GetRecords'],
        when: (r) => r.shardId === open[0],
        times: 3,
        ...KinesisFault.Throttled,
      });
      proxy.inject({
        operations: ['GetRecords', 'GetShardIterator'],
        when: (r) => r.shardId === open[1],
        times: 3,
        ...KinesisFault.InternalFailure,
      });
    },
    reached(flow, proxy) {
      expect([...new Set(proxy.injected.map((f) => f.type))].sort()).toEqual([
        'ExpiredIteratorException',
        'InternalFailure',
        'ProvisionedThroughputExceededException',
      ]);
      expect(flow.logs()).toMatch(/iterator of \S+ expired/);
      expect(flow.logs()).toMatch(/GetRecords on \S+ failed \(.*InternalFailure/);
    },
  },
  fanOut: {
    // From the start: what still goes over HTTP/1.1 behind the front (the spouts' listings, the front's seeks)
    // fails at random, and the first subscribes to two shards are refused, throttled or failing.
    scatter(proxy, front, open) {
      proxy.inject({
        operations: ['ListShards', 'DescribeStreamSummary', 'GetShardIterator'],
        probability: 0.08,
        ...KinesisFault.InternalFailure,
      });
      front!.inject({ kind: 'refuse', type: 'LimitExceededException', shardId: open[0], times: 3 });
      front!.inject({ kind: 'refuse', type: 'InternalFailure', status: 500, shardId: open[1], times: 2 });
    },
    // Mid-stream, at each burst: a reset stream, an exception event, a dropped connection, and a stall that
    // holds its subscription until the next burst (or the subscription's lifetime) ends it.
    burst(_proxy, front, open) {
      for (const stall of stalls.splice(0)) stall.remove();
      front!.inject({ kind: 'reset', shardId: open[0], times: 1 });
      front!.inject({ kind: 'errorEvent', exceptionType: 'InternalFailureException', shardId: open[1], times: 1 });
      front!.inject({ kind: 'reset', how: 'destroySocket', shardId: open[2], times: 1 });
      stalls.push(front!.inject({ kind: 'stall', shardId: open[1], afterRecords: 1, times: 1 }));
    },
    reached(flow, proxy, front) {
      for (const stall of stalls.splice(0)) stall.remove();
      expect(proxy.injected.map((f) => f.type)).toContain('InternalFailure');
      expect([...new Set(front!.injected.map((f) => f.detail))].sort()).toEqual([
        'InternalFailure',
        'InternalFailureException',
        'LimitExceededException',
        'destroySocket',
        'rstStream',
        'stall',
      ]);
      expect(flow.logs()).toMatch(/subscription to \S+ failed \(.*InternalFailure/);
    },
  },
};
const stalls: { remove(): void }[] = [];
