/**
 * Seeded pseudo-random numbers: every choice the simulation makes comes from one seed, split into
 * independent streams (workload, faults, each instance's jitter) so that adding a draw in one place
 * does not reshuffle every other decision of a seed.
 */

/** sfc32: small, fast, and good enough for test choices; state of four 32-bit words. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = '') {
    const h = hash32(`${seed >>> 0}/${stream}`);
    this.a = h ^ 0x9e3779b9;
    this.b = hash32(`${h}b`);
    this.c = hash32(`${h}c`);
    this.d = 1;
    for (let i = 0; i < 12; i += 1) this.next();
  }

  /** A number in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** A new independent stream derived from this one's next draw. */
  fork(stream: string): Random {
    return new Random(Math.floor(this.next() * 4294967296), stream);
  }
}

/** FNV-1a then a murmur finaliser: spreads similar seeds apart. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
