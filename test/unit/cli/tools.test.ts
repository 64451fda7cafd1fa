import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helpFor, isHelpRequest, processIo, runTool } from '../../../src/cli/tools';
import { kinesisProblem, NO_CREDENTIALS_FIX } from '../../../src/kinesis/errors';

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

describe("a tool's failure", () => {
  // Where the SDK's default chain looks; none of them may answer here.
  const CREDENTIAL_VARIABLES = [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_CONFIG_FILE',
    'AWS_SHARED_CREDENTIALS_FILE',
    'AWS_WEB_IDENTITY_TOKEN_FILE',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    'AWS_EC2_METADATA_DISABLED',
  ];
  const saved = Object.fromEntries(CREDENTIAL_VARIABLES.map((name) => [name, process.env[name]]));
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("without AWS credentials says what to do, as the spout does, not only the SDK's bare message", async () => {
    for (const name of CREDENTIAL_VARIABLES) delete process.env[name];
    const dir = mkdtempSync(join(tmpdir(), 'tool-credentials-'));
    process.env.AWS_CONFIG_FILE = join(dir, 'no-config');
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'no-credentials');
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
    const config = join(dir, 'spout.json');
    writeFileSync(
      config,
      JSON.stringify({
        streamName: 'orders',
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:9',
        applicationName: 'app',
        readMode: 'fanOut',
        zookeeper: { connect: '127.0.0.1:9' },
      }),
    );
    const err: string[] = [];
    const io = { ...processIo(), out: () => undefined, err: (t: string) => err.push(t) };
    expect(await runTool('deregister-consumer', ['--config', config, '--yes'], io)).toBe(1);
    expect(err.join('\n')).toContain(`kinesis-spout deregister-consumer failed: `);
    expect(err.join('\n')).toContain(`; ${NO_CREDENTIALS_FIX}`);
    expect(kinesisProblem({ name: 'CredentialsProviderError' }, 's').fix).toBe(NO_CREDENTIALS_FIX);
  }, 30_000);
});
