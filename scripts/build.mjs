// Bundles the spout into one self-contained file that a topology jar carries under resources/, and writes
// beside it the licenses of every package the bundle contains (shipped in the npm package and the jar) and
// the configuration's JSON schema (the Java module validates the kinesis.spout map with it at build time).
import { build } from 'esbuild';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';

const outfile = 'multilang/resources/kinesis-spout.cjs';
const noticesFile = 'multilang/resources/kinesis-spout.THIRD-PARTY-LICENSES.txt';
const schemaFile = 'multilang/resources/kinesis-spout.schema.json';
// The KCL lease table's DynamoDB client, for the import and export tools only: a file of its own beside the
// bundle, which requires it when a tool asks (the spout's processes never load it nor hold its source).
const dynamoFile = 'multilang/resources/kinesis-spout-dynamodb.cjs';
const kclTableSource = resolve('src/kinesis/kclLeaseTable.ts');

const schema = await configSchemaModule();
/** One CommonJS file for Node 20 and later, everything it needs inside. */
const esbuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
};
const result = await build({
  ...esbuildOptions,
  entryPoints: ['src/cli/kinesis-spout.ts'],
  outfile,
  banner: { js: '#!/usr/bin/env node' },
  plugins: [precompiledConfigValidator(schema), separateKclTable()],
});
const dynamo = await build({ ...esbuildOptions, entryPoints: [kclTableSource], outfile: dynamoFile });
asciiOnly(dynamoFile);
noSchemaCompiler(result.metafile.outputs[outfile].inputs);
asciiOnly(outfile);
chmodSync(outfile, 0o755);
const bundled = bundledPackages({
  ...result.metafile.outputs[outfile].inputs,
  ...dynamo.metafile.outputs[dynamoFile].inputs,
});
checkEngines(bundled);
writeFileSync(noticesFile, notices(bundled));
writeFileSync(schemaFile, `${JSON.stringify(schema.configSchema, null, 1)}\n`);

/**
 * src/config/schemaValidator.ts compiles the schema with ajv when it loads; in the bundle, the module is the
 * code ajv generates for the schema instead (standalone code: the same validating function, its error
 * objects and messages), which needs only ajv's small run-time helpers. Generated here at each build, never
 * written to disk.
 */
function precompiledConfigValidator({ configSchema, configSchemaOptions }) {
  const validatorPath = resolve('src/config/schemaValidator.ts');
  return {
    name: 'precompiled-config-validator',
    setup(b) {
      b.onLoad({ filter: /[\\/]src[\\/]config[\\/]schemaValidator\.ts$/ }, (args) => {
        if (args.path !== validatorPath) return undefined;
        const require = createRequire(import.meta.url);
        const Ajv = require('ajv').default;
        const standaloneCode = require('ajv/dist/standalone').default;
        const ajv = new Ajv({ ...configSchemaOptions, code: { source: true, esm: true } });
        const code = standaloneCode(ajv, ajv.compile(configSchema));
        return {
          contents: `${code}\nexport { validate as validateConfigSchema };\n`,
          loader: 'js',
          resolveDir: resolve('.'),
        };
      });
    },
  };
}

/** `import('../kinesis/kclLeaseTable')` in the tools becomes a require of the separate file, next to the bundle at run time. */
function separateKclTable() {
  return {
    name: 'separate-kcl-table',
    setup(b) {
      b.onResolve({ filter: /[\\/]kclLeaseTable$/ }, (args) =>
        resolve(args.resolveDir, args.path) === kclTableSource.replace(/\.ts$/, '')
          ? { path: `./${basename(dynamoFile)}`, external: true }
          : undefined,
      );
    },
  };
}

/** The bundle must not carry ajv's compiler (what the precompiled validator is for): a new import of it fails the build. */
function noSchemaCompiler(inputs) {
  const compiler = Object.keys(inputs).filter((path) => /node_modules\/ajv\/dist\/(ajv|core|compile\/)/.test(path));
  if (compiler.length > 0) {
    throw new Error(
      `${outfile}: bundles ajv's schema compiler (${compiler[0]}, ...): only src/config/schemaValidator.ts may import ajv, and the build replaces it with precompiled code`,
    );
  }
}

/**
 * V8 keeps the bundle's source in the heap for as long as the process runs (functions are compiled from it
 * lazily), as a one-byte string if every character is Latin-1, as a two-byte one otherwise: twice 2 MB. esbuild
 * escapes strings and identifiers (its default charset is ASCII) but copies the comments it keeps as they
 * are, and one typographic apostrophe in a dependency's comment doubled the heap's largest object. Such
 * characters are written as `\uXXXX` escapes, inert in a comment; one anywhere else fails the build.
 */
function asciiOnly(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  let changed = false;
  for (let i = 0; i < lines.length; i += 1) {
    const at = lines[i].search(/[\u0080-\uffff]/);
    if (at < 0) continue;
    const before = lines[i].slice(0, at);
    if (!before.includes('//') && !/^\s*(\/\*|\*)/.test(before)) {
      throw new Error(`${file}:${i + 1}: a non-ASCII character outside a comment: ${lines[i].trim().slice(0, 120)}`);
    }
    lines[i] = lines[i].replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    changed = true;
  }
  if (changed) writeFileSync(file, lines.join('\n'));
}

/**
 * Every bundled package must run on the oldest Node this project supports (its own `engines`): the AWS
 * SDK's releases after the first week of January 2027 need Node 22, and a lockfile update pulling one in
 * would otherwise break the spout on Node 20 only at run time, on the workers.
 */
function checkEngines(packages) {
  const oldest = minimumMajor(JSON.parse(readFileSync('package.json', 'utf8')).engines.node);
  const tooNew = packages
    .map((p) => ({ ...p, needs: JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8')).engines?.node }))
    .filter((p) => p.needs !== undefined && minimumMajor(p.needs) > oldest);
  if (tooNew.length > 0) {
    throw new Error(
      `bundled packages need a newer Node than package.json's engines (>=${oldest}): ${tooNew.map((p) => `${p.name} ${p.version} (${p.needs})`).join(', ')}. ` +
        'Keep versions that run on it, or raise engines (and the README, scripts/nodes.sh, src/cli/nodeVersion.ts).',
    );
  }
}

/** The lowest major a range such as `>=20.0.0`, `>= 18`, `^20.19.0 || >=22` admits (0 when it has no bound). */
function minimumMajor(range) {
  const majors = [...String(range).matchAll(/(?:>=|\^|~)?\s*v?(\d+)(?:\.[\dx*]+)*/g)].map((m) => Number(m[1]));
  return majors.length > 0 ? Math.min(...majors) : 0;
}

/** src/config/schema.ts: the schema object, as the spout itself validates with it, and ajv's options. */
async function configSchemaModule() {
  const bundled = await build({
    entryPoints: ['src/config/schema.ts'],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    logLevel: 'warning',
  });
  const source = Buffer.from(bundled.outputFiles[0].contents).toString('base64');
  return import(`data:text/javascript;base64,${source}`);
}

/** The package folders whose files contributed bytes to the bundle (tree-shaken-away files do not count). */
function bundledPackages(inputs) {
  const dirs = new Set();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    if (bytesInOutput === 0) continue;
    const parts = path.split('/');
    const at = parts.lastIndexOf('node_modules');
    if (at < 0) continue; // this project's own source
    const nameParts = parts[at + 1].startsWith('@') ? 2 : 1;
    dirs.add(parts.slice(0, at + 1 + nameParts).join('/'));
  }
  return [...dirs].map(describe).sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

function describe(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const license =
    typeof pkg.license === 'string'
      ? pkg.license
      : (pkg.license?.type ??
        (Array.isArray(pkg.licenses) ? pkg.licenses.map((l) => l.type ?? l).join(' OR ') : undefined));
  // LICENSE, LICENSE.md, LICENCE.txt, license, COPYING; NOTICE files too (Apache-2.0 asks to pass them on).
  const files = readdirSync(dir)
    .filter((f) => /^(licen[cs]e|copying|notice)([.-].*)?$/i.test(f))
    .sort();
  if (!license && files.length === 0) {
    throw new Error(
      `${dir}: bundled into ${outfile} but declares no license and has no LICENSE file: cannot write its notice`,
    );
  }
  return {
    name: pkg.name ?? basename(dir),
    version: pkg.version ?? 'unknown',
    license: license ?? 'see the text below',
    dir,
    files,
  };
}

function notices(packages) {
  const rule = '='.repeat(80);
  const header = [
    `Third-party software bundled in ${basename(outfile)}: ${packages.length} packages.`,
    `Generated by scripts/build.mjs from the bundle's inputs; each package's name, version, license and license files.`,
    '',
  ];
  const sections = packages.map((p) => {
    const texts = p.files.map((f) => `--- ${f}\n\n${readFileSync(join(p.dir, f), 'utf8').trim()}\n`);
    // The license's text is then the one another package of the same license ships, named here.
    const sameLicense = packages.find((other) => other.license === p.license && other.files.length > 0);
    const where = sameLicense ? `; its text is under ${sameLicense.name} ${sameLicense.version}` : '';
    const missing =
      p.files.length === 0
        ? [`(the package ships no license file; its package.json declares ${p.license}${where})\n`]
        : [];
    return [rule, `${p.name} ${p.version}`, `License: ${p.license}`, rule, '', ...texts, ...missing].join('\n');
  });
  return `${[...header, ...sections].join('\n')}\n`;
}
