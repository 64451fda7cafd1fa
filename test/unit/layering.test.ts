/**
 * The layers of src/, read from its import lines: core/ (and errors.ts) at the bottom; kinesis/, config/,
 * multilang/ and coordination/ above it, none importing another; then lease assignment (assignment/) and the
 * held shards (held/), neither importing the other; then one stream's coordinator (stream/) and the tools
 * (tools/), neither importing the other; the Storm face (spout/) above those; cli/ on top. And every Kinesis
 * SDK command is built in kinesis/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';

const SRC = join(__dirname, '../../src');

/** How high each folder of src/ sits; folders of one height may not import each other. */
const LAYER: Readonly<Record<string, number>> = {
  core: 0,
  kinesis: 1,
  config: 1,
  multilang: 1,
  coordination: 1,
  assignment: 2,
  held: 2,
  stream: 3,
  tools: 3,
  spout: 4,
  cli: 5,
};

interface SourceFile {
  /** Path below src/, with forward slashes. */
  path: string;
  text: string;
}

/** The folder of src/ a path below it belongs to; files directly in src/ (errors.ts) are core. */
function folderOf(path: string): string {
  const slash = path.indexOf('/');
  return slash < 0 ? 'core' : path.slice(0, slash);
}

/** Every module a file names: static imports and re-exports (one or many lines), `import()` and `require()`. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
    /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]);
  return found;
}

/** One line per import that breaks the layering, and per SDK command built outside kinesis/. */
function violations(files: readonly SourceFile[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const from = folderOf(file.path);
    const height = LAYER[from];
    if (height === undefined) {
      problems.push(`${file.path}: src/${from}/ has no place in the layers (add it to LAYER)`);
      continue;
    }
    for (const specifier of specifiers(file.text)) {
      if (!specifier.startsWith('.')) {
        if (from !== 'kinesis' && specifier.startsWith('@aws-sdk/client-kinesis')) {
          const commands = /\b\w+Command\b(?!Input|Output)/.exec(importedNames(file.text, specifier));
          if (commands)
            problems.push(
              `${file.path}: imports ${commands[0]} from ${specifier}: Kinesis requests are built in kinesis/`,
            );
        }
        continue;
      }
      const target = posix.normalize(posix.join(posix.dirname(file.path), specifier));
      if (target.startsWith('..')) {
        problems.push(`${file.path}: imports ${specifier}, outside src/`);
        continue;
      }
      const to = folderOf(target);
      if (to === from) continue;
      const toHeight = LAYER[to];
      if (toHeight === undefined) problems.push(`${file.path}: imports ${specifier}, in no layer`);
      else if (toHeight > height)
        problems.push(`${file.path}: imports ${specifier}: ${from}/ may not import ${to}/, a layer above`);
      else if (toHeight === height)
        problems.push(`${file.path}: imports ${specifier}: ${from}/ may not import ${to}/, beside it`);
    }
    if (from !== 'kinesis') {
      for (const match of file.text.matchAll(/\bnew\s+(\w+Command)\s*\(/g))
        problems.push(`${file.path}: builds ${match[1]}: Kinesis requests are built in kinesis/`);
    }
  }
  return problems;
}

/** The names between `import` and `from '<specifier>'` (all the statements naming it). */
function importedNames(text: string, specifier: string): string {
  const escaped = specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const statement = new RegExp(`^\\s*(?:import|export)\\b([^;'"]*?)\\bfrom\\s*['"]${escaped}['"]`, 'gm');
  return [...text.matchAll(statement)].map((m) => m[1]).join(' ');
}

function sourceFiles(dir: string): SourceFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    if (!entry.name.endsWith('.ts')) return [];
    return [{ path: relative(SRC, full).split('\\').join('/'), text: readFileSync(full, 'utf8') }];
  });
}

describe('the layers of src/', () => {
  const files = sourceFiles(SRC);

  it('reads every source file and its imports', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(new Set(files.map((f) => folderOf(f.path)))).toEqual(new Set(Object.keys(LAYER)));
    const coordinator = files.find((f) => f.path === 'stream/coordinator.ts') ?? files[0];
    expect(specifiers(coordinator.text).length).toBeGreaterThan(5);
  });

  it('imports only downwards or within a folder, and builds Kinesis requests only in kinesis/', () => {
    expect(violations(files)).toEqual([]);
  });

  it('fails a sideways import, an upward one, and an SDK command built outside kinesis/', () => {
    const bad: SourceFile[] = [
      { path: 'config/x.ts', text: "import { LogLevel } from '../multilang/protocol';" },
      { path: 'core/y.ts', text: "import type {\n  Session,\n} from '../stream/joining';" },
      { path: 'tools/z.ts', text: "import { identityMismatch } from '../stream/joining';" },
      { path: 'held/w.ts', text: "import { planRound } from '../assignment/plan';" },
      { path: 'assignment/v.ts', text: "import type { OwnedShard } from '../held/ownedShard';" },
      {
        path: 'tools/lag.ts',
        text: "import { GetRecordsCommand, type GetRecordsCommandOutput } from '@aws-sdk/client-kinesis';\nconst c = new GetRecordsCommand({});",
      },
      {
        path: 'kinesis/ok.ts',
        text: "import { GetRecordsCommand } from '@aws-sdk/client-kinesis';\nnew GetRecordsCommand({});",
      },
      {
        path: 'spout/ok.ts',
        text: "import type { Shard } from '@aws-sdk/client-kinesis';\nimport { LogLevel } from '../core/log';",
      },
    ];
    expect(violations(bad)).toEqual([
      'config/x.ts: imports ../multilang/protocol: config/ may not import multilang/, beside it',
      'core/y.ts: imports ../stream/joining: core/ may not import stream/, a layer above',
      'tools/z.ts: imports ../stream/joining: tools/ may not import stream/, beside it',
      'held/w.ts: imports ../assignment/plan: held/ may not import assignment/, beside it',
      'assignment/v.ts: imports ../held/ownedShard: assignment/ may not import held/, beside it',
      'tools/lag.ts: imports GetRecordsCommand from @aws-sdk/client-kinesis: Kinesis requests are built in kinesis/',
      'tools/lag.ts: builds GetRecordsCommand: Kinesis requests are built in kinesis/',
    ]);
  });
});
