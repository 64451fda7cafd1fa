/** `npm run docs:config`: rewrites docs/configuration.md's configuration table from the schema. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configTable } from '../src/config/docs';
import { replaceBetween } from './generated';

export const CONFIGURATION_PAGE = join(__dirname, '../docs/configuration.md');

if (require.main === module) {
  const text = readFileSync(CONFIGURATION_PAGE, 'utf8');
  writeFileSync(CONFIGURATION_PAGE, replaceBetween(text, 'config', configTable(), 'docs/configuration.md'));
  process.stdout.write('docs/configuration.md: configuration table regenerated from src/config/schema.ts\n');
}
