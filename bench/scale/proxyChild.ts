/**
 * A process of counting proxies (bench/scale/proxies.ts forks it): per task it is asked for, a ZooKeeper proxy
 * (zkCounter.ts) and a Kinesis proxy (kinesisCounter.ts) on free loopback ports. `fetch` hands over what they
 * saw since the last fetch, times as epoch ms (ipc.ts): the new events, and the round trips (and
 * GetShardIterator's shard) of events handed over before their answer came.
 * `node --import tsx bench/scale/proxyChild.ts <zookeeper port> <kinesis endpoint>`
 */
import { epochNow, serve } from './ipc';
import { type KinesisCall, startKinesisCounter, type KinesisCounter } from './kinesisCounter';
import { startZkCounter, type ZkCounter, type ZkRequestEvent } from './zkCounter';

/** What one task's proxies saw since the last fetch. */
export interface ProxyDelta {
  task: number;
  zkEvents: ZkRequestEvent[];
  /** [index in all the task's events, rttMs]: answers to events handed over unanswered. */
  zkAnswers: [number, number][];
  notifications: number[];
  pings: number;
  calls: KinesisCall[];
  callAnswers: [number, string | undefined, number][];
}

interface Pair {
  zk: ZkCounter;
  kinesis: KinesisCounter;
  zkSent: number;
  zkUnanswered: Set<number>;
  notificationsSent: number;
  callsSent: number;
  callsUnanswered: Set<number>;
}

/** performance.now() -> epoch ms (this process's origin). */
const epoch = (at: number) => performance.timeOrigin + at;

function delta(task: number, p: Pair): ProxyDelta {
  const zkAnswers: [number, number][] = [];
  for (const i of p.zkUnanswered) {
    const rtt = p.zk.events[i].rttMs;
    if (rtt === undefined) continue;
    zkAnswers.push([i, rtt]);
    p.zkUnanswered.delete(i);
  }
  const callAnswers: [number, string | undefined, number][] = [];
  for (const i of p.callsUnanswered) {
    const call = p.kinesis.calls[i];
    if (call.rttMs === undefined) continue;
    callAnswers.push([i, call.shardId, call.rttMs]);
    p.callsUnanswered.delete(i);
  }
  const zkEvents = p.zk.events.slice(p.zkSent).map((e, k) => {
    if (e.rttMs === undefined) p.zkUnanswered.add(p.zkSent + k);
    return { ...e, at: epoch(e.at) };
  });
  const calls = p.kinesis.calls.slice(p.callsSent).map((c, k) => {
    if (c.rttMs === undefined) p.callsUnanswered.add(p.callsSent + k);
    return { ...c, at: epoch(c.at) };
  });
  const notifications = p.zk.notifications.slice(p.notificationsSent).map(epoch);
  p.zkSent += zkEvents.length;
  p.callsSent += calls.length;
  p.notificationsSent += notifications.length;
  return { task, zkEvents, zkAnswers, notifications, pings: p.zk.pings, calls, callAnswers };
}

function main(): void {
  const zkPort = Number(process.argv[2]);
  const kinesisEndpoint = process.argv[3];
  const pairs = new Map<number, Pair>();
  serve(
    {
      /** Proxies for task `task`: their ports. */
      open: async ({ task }: { task: number }) => {
        const [zk, kinesis] = await Promise.all([startZkCounter(zkPort), startKinesisCounter(kinesisEndpoint)]);
        pairs.set(task, {
          zk,
          kinesis,
          zkSent: 0,
          zkUnanswered: new Set(),
          notificationsSent: 0,
          callsSent: 0,
          callsUnanswered: new Set(),
        });
        return { zkPort: zk.port, kinesisEndpoint: kinesis.endpoint };
      },
      /** Every task's news since the last fetch, and the time of the fetch. */
      fetch: () => ({ at: epochNow(), deltas: [...pairs].map(([task, p]) => delta(task, p)) }),
    },
    async () => {
      await Promise.all([...pairs.values()].flatMap((p) => [p.zk.close(), p.kinesis.close()]));
    },
  );
}

main();
