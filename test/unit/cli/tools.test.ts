import { helpFor, isHelpRequest } from '../../../src/cli/tools';

describe('the entry point: a flag is never the spout', () => {
  it('asks for help with a flag or "help", runs the spout with nothing or a config file', () => {
    expect(['--help', '-h', 'help', '--config', '--version'].map(isHelpRequest)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([undefined, 'spout.json', '/etc/kinesis/spout.json'].map(isHelpRequest)).toEqual([false, false, false]);
  });

  it('prints the usage: asked, on stdout with 0; an unknown flag, on stderr with 2', () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t) };
    expect(helpFor('--help', io)).toBe(0);
    expect(out.join('')).toContain('kinesis-spout status --config');
    expect(helpFor('--statsu', io)).toBe(2);
    expect(err.join('')).toMatch(/unknown option --statsu[\s\S]*kinesis-spout reset/);
  });
});
