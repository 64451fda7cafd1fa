/** What the benchmark asks of one lean-driver run, and what the run reports. */
export interface DriverSpec {
  /** The responder: a script run with this Node. */
  script: string;
  nodeOptions?: string[];
  env: Record<string, string>;
  /** Storm conf handed over in the handshake. */
  conf: Record<string, unknown>;
  startTimeoutMs: number;
  /** Measured from this long after the first tuple. */
  warmupSeconds: number;
  seconds: number;
  /** Throughput is also sampled over windows this long, to tell fast phases from slow ones. */
  windowMs: number;
  /** Paced: a `next` only while fewer tuples were acked than this rate allows since the start (default: flat out). */
  tuplesPerSecond?: number;
}

export interface Phase {
  tuplesPerSecond: number;
  /** Share of the measured windows in this phase. */
  share: number;
}

export interface DriverResult {
  responderPid: number;
  tuples: number;
  commands: number;
  seconds: number;
  tuplesPerSecond: number;
  /** The responder's CPU time (all its threads, user + system, from /proc) per tuple acked. */
  responderCpuMicrosPerTuple: number;
  /** The user-space part of it: the responder's own code, without the kernel's pipes and wake-ups. */
  responderUserMicrosPerTuple: number;
  /** The driver's own CPU time per tuple: 1e6 over it is the most the driver could drive. */
  driverCpuMicrosPerTuple: number;
  rssMiB: number;
  peakRssMiB: number;
  /** `next`s that emitted nothing during the measurement (the responder had nothing ready). */
  emptyNexts: number;
  windowMs: number;
  /** The spout's last `stats:` log line, when it logs them. */
  responderStats?: string;
  fast: Phase;
  slow: Phase;
  /** The measured window on the monotonic clock, in µs (as a `--cpu-prof` profile times its samples). */
  windowMonotonicMicros: [number, number];
}
