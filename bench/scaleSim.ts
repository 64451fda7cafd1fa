export type ScaleSimRun = Record<string, unknown>;
import type { ScaleSize } from './scale';
export async function scaleSimBench(_sizes: ScaleSize[], _log: (line: string) => void): Promise<ScaleSimRun[]> {
  return [];
}
