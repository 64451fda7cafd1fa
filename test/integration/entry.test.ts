/** The bundle's entry as an operator meets it: a flag is never taken for the spout (which would wait for Storm). */
import { spawnSync } from 'node:child_process';
import { ENTRY_SCRIPT } from '../helpers/stormDriver';
import { SPOUT_NODE } from '../helpers/spoutNode';

const run = (...args: string[]) =>
  spawnSync(SPOUT_NODE, [ENTRY_SCRIPT, ...args], { encoding: 'utf8', timeout: 20_000, input: '' });

test("--help prints the tools' usage and exits 0; an unknown flag, the usage on stderr and 2", () => {
  const help = run('--help');
  expect(help.status).toBe(0);
  expect(help.stdout).toContain('kinesis-spout reset  --config <file.json>');
  const bogus = run('--bogus');
  expect(bogus.status).toBe(2);
  expect(bogus.stderr).toContain('unknown option --bogus');
});
