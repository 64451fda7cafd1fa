/**
 * Fast and slow phases of a run: this VM switches between regimes (wake-ups slow while CPUs idle, fast
 * while they are busy) within a run. The windows' rates are split in two by 1-D two-means; phases whose
 * rates lie within 10 % of each other are one phase, reported as both.
 */
import type { Phase } from './spec';

export function splitPhases(rates: number[]): { fast: Phase; slow: Phase } {
  const n = rates.length;
  if (n === 0) return { fast: { tuplesPerSecond: 0, share: 0 }, slow: { tuplesPerSecond: 0, share: 0 } };
  const sorted = [...rates].sort((a, b) => a - b);
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  let lo = sorted[0];
  let hi = sorted[n - 1];
  let slow = sorted;
  let fast: number[] = [];
  for (let i = 0; i < 50 && hi > lo; i += 1) {
    const cut = (lo + hi) / 2;
    slow = sorted.filter((r) => r <= cut);
    fast = sorted.filter((r) => r > cut);
    const next = [mean(slow), fast.length ? mean(fast) : hi];
    if (next[0] === lo && next[1] === hi) break;
    [lo, hi] = next;
  }
  if (fast.length === 0 || hi < lo * 1.1) {
    const one = { tuplesPerSecond: mean(sorted), share: 1 };
    return { fast: one, slow: one };
  }
  return {
    fast: { tuplesPerSecond: hi, share: fast.length / n },
    slow: { tuplesPerSecond: lo, share: slow.length / n },
  };
}
