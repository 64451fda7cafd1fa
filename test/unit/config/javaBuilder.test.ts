/**
 * The Java builder's typed setters (storm/.../KinesisShellSpoutBuilder.java) against the schema, read from
 * the Java source: every key a setter sets must be a key of the schema, of a type the setter's argument
 * has, and a setter whose Javadoc lists the allowed strings must list the schema's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../../../src/config/schema';

const BUILDER = join(
  __dirname,
  '../../../storm/src/main/java/io/github/kinesisshellspout/KinesisShellSpoutBuilder.java',
);

interface SchemaNode {
  type?: string;
  enum?: readonly unknown[];
  pattern?: string;
  oneOf?: readonly SchemaNode[];
  items?: SchemaNode;
  properties?: Record<string, SchemaNode>;
}

/** What a Java argument is, in JSON terms; `literal` when it is a string constant. */
type JsonKind = {
  kind: 'string' | 'string[]' | 'object[]' | 'integer' | 'number' | 'boolean' | 'object';
  literal?: string;
};

interface Setter {
  name: string;
  javadoc: string;
  params: Map<string, string>;
  sets: { key: string; arg: string }[];
}

/** The public methods returning the builder, with their Javadoc, parameters and `set("key", arg)` calls. */
function parseSetters(java: string): Setter[] {
  const setters: Setter[] = [];
  const signature =
    /(?:\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*)?(?:@\w+(?:\([^)]*\))?\s+)*public\s+KinesisShellSpoutBuilder\s+(\w+)\s*\(([^)]*)\)\s*\{/g;
  for (let match = signature.exec(java); match; match = signature.exec(java)) {
    const [, javadoc = '', name, paramList] = match;
    const body = bodyFrom(java, signature.lastIndex - 1);
    const params = new Map<string, string>();
    for (const param of splitParams(paramList)) {
      const at = param.lastIndexOf(' ');
      params.set(
        param.slice(at + 1),
        param
          .slice(0, at)
          .replace(/^final\s+/, '')
          .trim(),
      );
    }
    const sets = [...body.matchAll(/\bset\(\s*"([^"]+)"\s*,\s*([^;]+?)\)\s*;/g)].map(([, key, arg]) => ({
      key,
      arg: arg.trim(),
    }));
    setters.push({ name, javadoc, params, sets });
  }
  return setters;
}

/** The parameters of a signature: commas inside type arguments (`Map<String, Object>`) do not split. */
function splitParams(list: string): string[] {
  const params: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of list) {
    if (c === '<') depth += 1;
    else if (c === '>') depth -= 1;
    if (c === ',' && depth === 0) {
      params.push(current);
      current = '';
    } else current += c;
  }
  params.push(current);
  return params.map((p) => p.trim()).filter(Boolean);
}

/** The text between the brace at `open` and the one that closes it. */
function bodyFrom(java: string, open: number): string {
  let depth = 0;
  for (let i = open; i < java.length; i += 1) {
    if (java[i] === '{') depth += 1;
    else if (java[i] === '}' && --depth === 0) return java.slice(open + 1, i);
  }
  throw new Error(`unbalanced braces after offset ${open}`);
}

function javaKind(type: string): JsonKind['kind'] | undefined {
  if (type === 'String') return 'string';
  if (type === 'String...' || type === 'List<String>' || type === 'String[]') return 'string[]';
  if (['int', 'long', 'Integer', 'Long'].includes(type)) return 'integer';
  if (['double', 'Double'].includes(type)) return 'number';
  if (type === 'boolean' || type === 'Boolean') return 'boolean';
  if (type.startsWith('Map<')) return 'object';
  if (/^List<Map<.*>>$/.test(type)) return 'object[]';
  return undefined;
}

/** The JSON kind of a `set` argument: a string literal, a parameter, or `List.of(parameter...)`. */
function argKind(arg: string, params: ReadonlyMap<string, string>): JsonKind | undefined {
  const literal = /^"((?:[^"\\]|\\.)*)"$/.exec(arg);
  if (literal) return { kind: 'string', literal: literal[1] };
  const param = params.get(arg);
  if (param !== undefined) {
    const kind = javaKind(param);
    return kind && { kind };
  }
  const list = /^List\.of\((\w+)\)$/.exec(arg);
  if (list && params.get(list[1]) === 'String...') return { kind: 'string[]' };
  return undefined;
}

function schemaAt(key: string): SchemaNode | undefined {
  let node: SchemaNode | undefined = configSchema as unknown as SchemaNode;
  for (const part of key.split('.')) node = node?.properties?.[part];
  return node;
}

/** Why `node` refuses a value of this kind, or undefined when it accepts one. */
function refusal(node: SchemaNode, arg: JsonKind): string | undefined {
  // A typed node's oneOf only says which keys it needs (`streams` entries): the type decides.
  if (node.oneOf && node.type === undefined) {
    const reasons = node.oneOf.map((branch) => refusal(branch, arg));
    return reasons.some((r) => r === undefined) ? undefined : reasons.join('; ');
  }
  if (node.type === 'array') {
    if (arg.kind !== 'string[]' && arg.kind !== 'object[]')
      return `the schema wants an array, the setter passes ${arg.kind}`;
    return node.items ? refusal(node.items, { kind: arg.kind === 'string[]' ? 'string' : 'object' }) : undefined;
  }
  // A JSON number accepts an integer too; an integer key does not accept a double.
  if (node.type === 'number' && arg.kind === 'integer') return undefined;
  if (node.type !== arg.kind) return `the schema wants ${node.type}, the setter passes ${arg.kind}`;
  if (arg.literal !== undefined) {
    if (node.enum && !node.enum.includes(arg.literal))
      return `"${arg.literal}" is not one of ${JSON.stringify(node.enum)}`;
    if (node.pattern && !new RegExp(node.pattern).test(arg.literal))
      return `"${arg.literal}" does not match ${node.pattern}`;
  }
  return undefined;
}

/** The strings a key allows when it is a string enum (directly, or as one branch of a oneOf). */
function stringEnum(node: SchemaNode): string[] | undefined {
  if (node.type === 'string' && node.enum) return node.enum.map(String);
  const branches = (node.oneOf ?? []).map(stringEnum).filter((e): e is string[] => e !== undefined);
  return branches.length > 0 ? branches.flat() : undefined;
}

/** Every problem between the setters and the schema, one line each. */
function disagreements(java: string): string[] {
  const problems: string[] = [];
  for (const setter of parseSetters(java)) {
    for (const { key, arg } of setter.sets) {
      const where = `${setter.name}(): set("${key}", ${arg})`;
      const node = schemaAt(key);
      if (!node) {
        problems.push(`${where}: no key ${key} in the schema`);
        continue;
      }
      const kind = argKind(arg, setter.params);
      if (!kind) {
        problems.push(`${where}: cannot tell the JSON type of ${arg}`);
        continue;
      }
      const why = refusal(node, kind);
      if (why) problems.push(`${where}: ${why}`);
      const allowed = stringEnum(node);
      if (allowed && kind.literal === undefined) {
        const documented = [...setter.javadoc.matchAll(/\{@code\s+([^}\s]+)\s*\}/g)].map((m) => m[1]).sort();
        if (documented.join(',') !== [...allowed].sort().join(','))
          problems.push(
            `${where}: the Javadoc names ${JSON.stringify(documented)}, the schema allows ${JSON.stringify(allowed)}`,
          );
      }
    }
  }
  return problems;
}

describe("the Java builder's typed setters agree with the schema", () => {
  const java = readFileSync(BUILDER, 'utf8');

  it('finds the typed setters in the Java source (the parser reads what is there)', () => {
    const keys = parseSetters(java).flatMap((s) => s.sets.map((c) => c.key));
    expect(keys).toEqual(
      expect.arrayContaining(['streamName', 'region', 'zookeeper.connect', 'outputFields', 'retry.deadLetterStream']),
    );
    expect(keys.length).toBeGreaterThanOrEqual(10);
  });

  it('every key a setter sets is in the schema, with the type and the allowed values the schema says', () => {
    expect(disagreements(java)).toEqual([]);
  });

  it('would say so when they disagree: a renamed key, a changed type, a value the schema does not allow', () => {
    const renamed = java.replace('set("dataFormat", dataFormat)', 'set("dataFmt", dataFormat)');
    expect(disagreements(renamed)).toEqual([expect.stringContaining('no key dataFmt in the schema')]);
    const retyped = java.replace('region(String region)', 'region(int region)');
    const listOfStrings = java.replace('streams(List<Map<String, Object>> streams)', 'streams(List<String> streams)');
    expect(disagreements(listOfStrings)).toEqual([
      expect.stringContaining('the schema wants object, the setter passes string'),
    ]);
    expect(disagreements(retyped)).toEqual([
      expect.stringContaining('the schema wants string, the setter passes integer'),
    ]);
    const badValue = java.replace('set("retry.onExhausted", "deadLetter")', 'set("retry.onExhausted", "deadletter")');
    expect(disagreements(badValue)).toEqual([expect.stringContaining('"deadletter" is not one of')]);
    const undocumented = java.replace('{@code base64} or {@code json}', '{@code base64}');
    expect(disagreements(undocumented)).toEqual([expect.stringContaining('the Javadoc names')]);
  });
});
