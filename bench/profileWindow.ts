/**
 * A `--cpu-prof` profile of a spout process read over the lean driver's measured window only: self time
 * by bundled module (esbuild's `// path` comments in the bundle tell which module a line is from), by
 * function, and inclusive time of a few groups (a sample counts for a group when any frame of its stack is
 * in it). Each sample counts for the median interval between samples.
 *
 * Usage: tsx bench/profileWindow.ts <profile.cpuprofile> <driver result .json> <bundle.js> [tuples]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** For each line of the bundle, the module it comes from (the last `// path` marker at or above it). */
function moduleOfLine(bundle: string): (line: number) => string {
  const lines = readFileSync(bundle, 'utf8').split('\n');
  const starts: { line: number; module: string }[] = [];
  lines.forEach((text, i) => {
    const m = /^\/\/ (\S+\.(?:js|mjs|cjs|ts|json))$/.exec(text);
    if (m) starts.push({ line: i, module: m[1] });
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = '(bundle head)';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid].line <= line) {
        found = starts[mid].module;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** A module path shortened to its package (node_modules) or kept as it is (our own files). */
function packageOf(module: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module);
  return m ? m[1] : module;
}

const GROUPS: [string, (where: string) => boolean][] = [
  ['AWS SDK (@aws-sdk, @smithy)', (w) => /@aws-sdk|@smithy/.test(w)],
  ['SigV4 signing (@smithy/signature-v4)', (w) => w.includes('@smithy/signature-v4')],
  ['fast GetRecords path', (w) => w.includes('src/kinesis/fastGetRecords')],
  ['polling reader', (w) => w.includes('src/kinesis/shardReader')],
  ['synthetic source', (w) => w.includes('bench/syntheticKinesis')],
  ['node http/net', (w) => /^node:(_http|http|net|internal\/http|internal\/net|internal\/stream_base)/.test(w)],
  ['ZooKeeper client', (w) => w.includes('node-zookeeper-client')],
  ['multilang (src/multilang)', (w) => w.includes('src/multilang')],
  ['spout (src/spout)', (w) => w.includes('src/spout')],
];

function main(): void {
  const [profilePath, resultPath, bundle, tuplesArg] = process.argv.slice(2);
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as Profile;
  const result = JSON.parse(readFileSync(resultPath, 'utf8')) as {
    windowMonotonicMicros: [number, number];
    tuples: number;
  };
  const [from, to] = result.windowMonotonicMicros;
  const tuples = Number(tuplesArg ?? result.tuples);
  const moduleOf = moduleOfLine(bundle);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const whereOf = (n: ProfileNode): string => {
    const { url, functionName, lineNumber } = n.callFrame;
    if (url.endsWith(bundle.split('/').pop() ?? '\0')) return moduleOf(lineNumber);
    if (url) return url;
    return functionName.startsWith('(') ? functionName : `(native) ${functionName}`;
  };
  const self = new Map<string, number>();
  const selfFn = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const interval = [...profile.timeDeltas].sort((a, b) => a - b)[profile.timeDeltas.length >> 1];
  let t = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const delta = profile.timeDeltas[i];
    t += delta;
    if (t < from || t > to) continue;
    // Each sample counts for one sampling interval: a gap between two samples (the thread held where the
    // profiler could not interrupt it) would otherwise give its whole length to the sample before it.
    const dt = interval;
    total += dt;
    const node = byId.get(profile.samples[i])!;
    const where = whereOf(node);
    const key = where.startsWith('(') ? where : packageOf(where);
    self.set(key, (self.get(key) ?? 0) + dt);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${where.startsWith('(') ? '' : where}:${node.callFrame.lineNumber}`;
    selfFn.set(fn, (selfFn.get(fn) ?? 0) + dt);
    const stack: string[] = [];
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id))
      stack.push(whereOf(byId.get(id)!));
    for (const [group, test] of GROUPS) if (stack.some(test)) inclusive.set(group, (inclusive.get(group) ?? 0) + dt);
  }
  const per = (us: number) => `${(us / tuples).toFixed(2)} us/tuple ${((us / total) * 100).toFixed(1)} %`;
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `  ${per(v).padEnd(28)} ${k}`)
      .join('\n');
  process.stdout.write(
    `${profilePath}: window ${((to - from) / 1e6).toFixed(1)} s, sampled ${(total / 1e6).toFixed(2)} s, ${tuples} tuples, ${per(total)}\n` +
      `self by module:\n${top(self, 25)}\nself by function:\n${top(selfFn, 30)}\ninclusive:\n${top(inclusive, GROUPS.length)}\n`,
  );
}

main();
