/** Rewrites the README's configuration table from the schema. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configTable } from '../src/config/docs';

const readme = join(__dirname, '../README.md');
const text = readFileSync(readme, 'utf8');
const [before, rest] = text.split('<!-- config:start -->');
const after = rest.split('<!-- config:end -->')[1];
writeFileSync(readme, `${before}<!-- config:start -->\n${configTable()}\n<!-- config:end -->${after}`);
