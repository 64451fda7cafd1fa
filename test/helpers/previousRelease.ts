/**
 * The previous release of the spout, built from its commit in this repository's history (`git archive`), for tests that run
 * two releases side by side. Its npm packages are this checkout's when both lock files are the same (no
 * download), else installed by `npm ci` from the registry.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(__dirname, '../..');

/**
 * The last main that landed before the formats rule of docs/zookeeper.md ("Formats across releases") was
 * written: its values carry no `release`, and its code predates the move of src/spout/. Raise it when a
 * release is cut.
 */
export const PREVIOUS_RELEASE = 'ffd136a7c4b6f7322640cf4ec311886d3d2b8c91';

export interface BuiltRelease {
  commit: string;
  /** Its bundled spout, as Storm's ShellSpout would start it. */
  script: string;
  remove(): void;
}

function git(args: string[], cwd = REPO): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Checks out `commit` into a temporary folder and builds its bundle. Throws, naming the fix, when the commit is not here. */
export function buildRelease(commit = PREVIOUS_RELEASE): BuiltRelease {
  try {
    git(['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    throw new Error(
      `the previous release's commit ${commit} is not in this clone (a shallow clone?): \`git fetch --unshallow\` brings it`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'previous-release-'));
  try {
    execFileSync('sh', ['-c', `git archive --format=tar ${commit} | tar -x -C "${dir}"`], {
      cwd: REPO,
      stdio: 'ignore',
    });
    const sameLock =
      readFileSync(join(dir, 'package-lock.json'), 'utf8') === readFileSync(join(REPO, 'package-lock.json'), 'utf8');
    if (sameLock && existsSync(join(REPO, 'node_modules')))
      symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
    else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'ignore' });
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: 'ignore' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    commit,
    script: join(dir, 'multilang/resources/kinesis-spout.cjs'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
