/**
 * The seeded fault plan: at each request to ZooKeeper or Kinesis, what goes wrong, and how long replies
 * take. Each seed draws its own rates (some seeds are calm, some hostile), so one seed count covers both
 * rare and dense faults. `calm()` ends the faults for the quiet phase; delays stay.
 */
import type { Random } from './random';

export type ZkRequestFault = 'none' | 'drop-before' | 'drop-after' | 'blackhole';
export type KinesisFault = 'none' | 'throttled' | 'expired-iterator' | 'not-found' | 'internal-failure';

export interface ZkFaults {
  zkRequest(op: string): ZkRequestFault;
  requestDelay(): number;
  replyDelay(): number;
  /**
   * Extra delay for a reply, and so for every reply after it: ZooKeeper answers a session in order
   * (FIFO), so a slow server or network holds back the whole connection, never one reply alone.
   */
  stallReply(): number;
  staleRead(): boolean;
  disconnectMs(): number;
  blackholeMs(sessionTimeoutMs: number): number;
  connectFails(): boolean;
  fraction(): number;
}

export interface KinesisFaults {
  kinesisRequest(command: string): KinesisFault;
  kinesisDelay(): number;
}

export interface FaultRates {
  zkDropBefore: number;
  zkDropAfter: number;
  zkBlackhole: number;
  zkStaleRead: number;
  zkStall: number;
  zkConnectFails: number;
  kinesisThrottled: number;
  kinesisExpiredIterator: number;
  kinesisNotFound: number;
  kinesisInternal: number;
}

export const NO_FAULTS: FaultRates = {
  zkDropBefore: 0,
  zkDropAfter: 0,
  zkBlackhole: 0,
  zkStaleRead: 0,
  zkStall: 0,
  zkConnectFails: 0,
  kinesisThrottled: 0,
  kinesisExpiredIterator: 0,
  kinesisNotFound: 0,
  kinesisInternal: 0,
};

/** Rates for one seed: each fault is off in some seeds, so a defect can be told apart from the others. */
export function drawRates(rng: Random): FaultRates {
  const rate = (max: number) => (rng.chance(0.3) ? 0 : rng.next() * max);
  return {
    zkDropBefore: rate(0.03),
    zkDropAfter: rate(0.03),
    zkBlackhole: rate(0.002),
    zkStaleRead: rate(0.2),
    zkStall: rate(0.02),
    zkConnectFails: rate(0.2),
    kinesisThrottled: rate(0.05),
    kinesisExpiredIterator: rate(0.02),
    kinesisNotFound: rate(0.01),
    kinesisInternal: rate(0.03),
  };
}

export class FaultPlan implements ZkFaults, KinesisFaults {
  private rates: FaultRates;

  constructor(
    private readonly rng: Random,
    readonly drawn: FaultRates,
  ) {
    this.rates = drawn;
  }

  /** No more faults from now on (the quiet phase). */
  calm(): void {
    this.rates = NO_FAULTS;
  }

  zkRequest(op: string): ZkRequestFault {
    // Writes are where an unknown outcome hurts: they are hit more often than reads. Transactions most of
    // all: the one that finishes a shard (SHARD_END, the finished marker, the lease delete) applied with
    // its reply lost leaves the stored checkpoint ahead of any the holder would write next, the case its
    // checkpoint writes must see after a conflict. There are only a few per run.
    const weight = op === 'getData' || op === 'getChildren' ? 0.5 : op === 'multi' ? 15 : 3;
    const r = this.rng.next() / weight;
    const { zkDropBefore, zkDropAfter, zkBlackhole } = this.rates;
    if (r < zkDropBefore) return 'drop-before';
    if (r < zkDropBefore + zkDropAfter) return 'drop-after';
    if (r < zkDropBefore + zkDropAfter + zkBlackhole) return 'blackhole';
    return 'none';
  }

  requestDelay(): number {
    return this.rng.int(1, 5);
  }

  replyDelay(): number {
    return this.rng.int(1, 5);
  }

  stallReply(): number {
    return this.rng.chance(this.rates.zkStall) ? this.rng.int(10, 1_000) : 0;
  }

  staleRead(): boolean {
    return this.rng.chance(this.rates.zkStaleRead);
  }

  disconnectMs(): number {
    return this.rng.chance(0.8) ? this.rng.int(5, 300) : this.rng.int(300, 3_000);
  }

  blackholeMs(sessionTimeoutMs: number): number {
    return Math.round(sessionTimeoutMs * (0.7 + this.rng.next() * 1.3));
  }

  connectFails(): boolean {
    return this.rng.chance(this.rates.zkConnectFails);
  }

  fraction(): number {
    return this.rng.next();
  }

  kinesisRequest(command: string): KinesisFault {
    const r = this.rng.next();
    const { kinesisThrottled, kinesisExpiredIterator, kinesisNotFound, kinesisInternal } = this.rates;
    const reading = command === 'GetRecords' || command === 'GetShardIterator' || command === 'SubscribeToShard';
    let edge = kinesisThrottled;
    if (r < edge) return 'throttled';
    if (command === 'GetRecords' && r < (edge += kinesisExpiredIterator)) return 'expired-iterator';
    if (reading && r < (edge += kinesisNotFound)) return 'not-found';
    if (r < (edge += kinesisInternal)) return 'internal-failure';
    return 'none';
  }

  kinesisDelay(): number {
    return this.rng.int(1, 30);
  }
}
