/**
 * The phases a held shard goes through, by name: what the held shards (held/lifecycle.ts, where each phase
 * is defined with what it carries) and the assignment round (assignment/plan.ts, which acts on each) share.
 */
export type PhaseKind = 'starting' | 'reading' | 'draining' | 'releasing' | 'closing' | 'givingBack' | 'gone';
