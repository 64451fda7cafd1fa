import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configTable } from '../../../src/config/docs';

test("the README's configuration table is the schema's (run `npm run docs:config` after changing the schema)", () => {
  const readme = readFileSync(join(__dirname, '../../../README.md'), 'utf8');
  const table = readme.split('<!-- config:start -->')[1]?.split('<!-- config:end -->')[0]?.trim();
  expect(table).toBe(configTable());
});
