import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeVersionNote, OLDEST_SUPPORTED_NODE, quietSdkNodeWarning } from '../../../src/cli/nodeVersion';
import { LogLevel } from '../../../src/core/log';

const ROOT = join(__dirname, '../../..');

describe('the Node.js version said at start', () => {
  it('names the version; below the supported range, a warning saying what to run instead', () => {
    expect(nodeVersionNote('v24.22.3')).toEqual({
      level: LogLevel.Info,
      unsupported: false,
      message: 'running on Node.js v24.22.3',
    });
    expect(nodeVersionNote('v22.23.5').level).toBe(LogLevel.Info);
    for (const version of ['v18.20.8', 'v16.0.0', 'not-a-version']) {
      const note = nodeVersionNote(version);
      expect(note).toMatchObject({ level: LogLevel.Warn, unsupported: true });
      expect(note.message).toContain(`Node.js ${version}, below the supported range (Node 20 and newer)`);
    }
  });

  it('Node 20 is supported but past its end of life: a warning, with the SDK date and what to move to', () => {
    const note = nodeVersionNote('v20.20.2');
    expect(note).toMatchObject({ level: LogLevel.Warn, unsupported: false });
    expect(note.message).toMatch(
      /v20\.20\.2: Node 20 reached its end of life in April 2026.*January 2027.*Node 22 or 24/,
    );
  });

  it('the supported range is the one package.json declares, and CI installs a Node of each supported line', () => {
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } })
      .engines.node;
    expect(engines).toBe(`>=${OLDEST_SUPPORTED_NODE}`);
    const pinned = /MAJORS=\(([\d ]+)\)/.exec(readFileSync(join(ROOT, 'scripts/nodes.sh'), 'utf8'))![1].split(' ');
    expect(pinned.map(Number)[0]).toBe(OLDEST_SUPPORTED_NODE);
  });
});

describe("the AWS SDK's NodeVersionSupportWarning in the tools", () => {
  it("is turned off by the SDK's own switch, unless the operator set that switch", () => {
    const env: NodeJS.ProcessEnv = {};
    quietSdkNodeWarning(env);
    expect(env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('true');
    const chosen: NodeJS.ProcessEnv = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'false' };
    quietSdkNodeWarning(chosen);
    expect(chosen.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('false');
  });
});
