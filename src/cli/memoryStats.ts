/** The memory figures of the `stats:` log line. */
import { getHeapSpaceStatistics } from 'node:v8';

/**
 * Resident memory; the V8 heap committed and used, and used by data (the heap less compiled code, which
 * grows as the JIT warms up, not with what is held); off-heap (Buffer) bytes. After a full GC when node
 * was started with `--expose-gc` (the memory benchmark and test do), so that they show what is retained.
 */
export function memoryStats(): string {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  const code = getHeapSpaceStatistics().find((s) => s.space_name === 'code_space')?.space_used_size ?? 0;
  const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  return (
    `rssMiB=${Math.round(m.rss / 2 ** 20)} heapTotalMiB=${mib(m.heapTotal)} heapUsedMiB=${mib(m.heapUsed)} ` +
    `heapDataMiB=${mib(m.heapUsed - code)} externalMiB=${mib(m.external)}`
  );
}
