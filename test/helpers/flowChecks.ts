/** The guarantees a fault test ends on, checked on a Flow's evidence. */
import type { Flow } from './flow';

/**
 * Stops the producer, then: every record put is delivered within `withinMs`, first deliveries per key in the
 * order put (so parents before children), never two processes emitting one shard at once, and at most
 * `maxDuplicates` re-emits (what may have been in flight at hand-overs).
 */
export async function expectFlowInvariants(
  flow: Flow,
  options: { maxDuplicates?: number; withinMs?: number } = {},
): Promise<void> {
  await flow.stopProducer();
  const began = Date.now();
  await flow.waitAllDelivered(options.withinMs ?? 20_000);
  if (process.env.DEBUG_FLOW)
    console.log(`delivered all ${flow.put.length} after ${Date.now() - began} ms\n${flow.logs()}`);
  expect(flow.orderViolations()).toEqual([]);
  expect(flow.concurrentReaders()).toEqual([]);
  expect(flow.duplicates()).toBeLessThanOrEqual(options.maxDuplicates ?? 0);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
