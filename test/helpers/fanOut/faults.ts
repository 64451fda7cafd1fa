/**
 * Faults the front injects into fan-out, like the HTTP fault proxy does for polling: on a SubscribeToShard
 * call (refused with an AWS error: LimitExceededException is throttling) or in an open subscription, before
 * an event would be pushed (the HTTP/2 stream reset or its connection dropped, an exception event, a
 * stall, a spoilt message). Each rule can be scoped to a shard or a consumer, and fire a bounded number of
 * times.
 */
import type { Corruption } from './eventStream';

export type FanOutFault =
  /** SubscribeToShard answered with this error instead (status 400 unless told). */
  | { kind: 'refuse'; type: string; status?: number; message?: string }
  /** The subscription's HTTP/2 stream reset (RST_STREAM, INTERNAL_ERROR), or its whole connection destroyed. */
  | { kind: 'reset'; how?: 'rstStream' | 'destroySocket' }
  /** An exception event (`InternalFailureException`, `KMSThrottlingException`...), after which the stream ends. */
  | { kind: 'errorEvent'; exceptionType: string; message?: string }
  /** Nothing more pushed (and kinesis-local not read) until the rule is removed; the stream stays open. */
  | { kind: 'stall' }
  /** The next event pushed with a broken checksum or header. */
  | { kind: 'corrupt'; part: Corruption };

export interface FaultScope {
  shardId?: string;
  /** The consumer's name (any stream) or its ARN. */
  consumer?: string;
  /** Only once the subscription has pushed at least this many records (stream faults); default 0. */
  afterRecords?: number;
  /** Fires at most this many times; default unbounded (a stall counts once per subscription it holds). */
  times?: number;
}

export type FanOutFaultRule = FanOutFault & FaultScope;

export interface InjectedFanOutFault {
  kind: FanOutFault['kind'];
  shardId: string;
  consumerArn: string;
  /** What was injected: the error type, `rstStream`, `destroySocket`, `stall`, the corrupted part. */
  detail: string;
  at: number;
}

export interface ActiveFanOutRule {
  readonly injected: number;
  readonly removed: boolean;
  remove(): void;
}

interface RuleState {
  rule: FanOutFaultRule;
  injected: number;
  removed: boolean;
}

export interface FaultTarget {
  shardId: string;
  consumerArn: string;
  consumerName: string;
  recordsPushed: number;
}

export class FaultRules {
  private readonly rules: RuleState[] = [];
  readonly injected: InjectedFanOutFault[] = [];

  add(rule: FanOutFaultRule): ActiveFanOutRule {
    const state: RuleState = { rule, injected: 0, removed: false };
    this.rules.push(state);
    return {
      get injected() {
        return state.injected;
      },
      get removed() {
        return state.removed;
      },
      remove() {
        state.removed = true;
      },
    };
  }

  /** The first live rule of these kinds that applies to the target; counted as fired. */
  fire(
    kinds: readonly FanOutFault['kind'][],
    target: FaultTarget,
  ): { rule: FanOutFaultRule; live: () => boolean } | undefined {
    const state = this.rules.find(
      (s) =>
        !s.removed &&
        kinds.includes(s.rule.kind) &&
        (s.rule.times === undefined || s.injected < s.rule.times) &&
        (s.rule.shardId === undefined || s.rule.shardId === target.shardId) &&
        (s.rule.consumer === undefined ||
          s.rule.consumer === target.consumerName ||
          s.rule.consumer === target.consumerArn) &&
        target.recordsPushed >= (s.rule.afterRecords ?? 0),
    );
    if (!state) return undefined;
    state.injected += 1;
    this.injected.push({
      kind: state.rule.kind,
      shardId: target.shardId,
      consumerArn: target.consumerArn,
      detail: detailOf(state.rule),
      at: performance.now(),
    });
    return { rule: state.rule, live: () => !state.removed };
  }
}

function detailOf(rule: FanOutFault): string {
  switch (rule.kind) {
    case 'refuse':
      return rule.type;
    case 'reset':
      return rule.how ?? 'rstStream';
    case 'errorEvent':
      return rule.exceptionType;
    case 'stall':
      return 'stall';
    case 'corrupt':
      return rule.part;
  }
}
