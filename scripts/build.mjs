// Bundles the spout into one self-contained file that a topology jar carries under resources/.
import { build } from 'esbuild';
import { chmodSync } from 'node:fs';

const outfile = 'multilang/resources/kinesis-spout.cjs';
await build({
  entryPoints: ['src/cli/kinesis-spout.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node18',
  format: 'cjs',
  legalComments: 'none',
  logLevel: 'warning',
  banner: { js: '#!/usr/bin/env node' },
});
chmodSync(outfile, 0o755);
