/**
 * Builds the Java module (storm/: `mvn install`, which runs its JUnit tests, into the local Maven
 * repository) and then a topology example depending on it, each when its output is missing or its inputs
 * changed (sources, pom, the bundle the module packs, the module jar an example packs). Inputs are
 * compared by content hash: `npm test` rebuilds the bundle every run, and a byte-identical script must not
 * cost a Maven build each time.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(__dirname, '../../..');
export const SPOUT_SCRIPT = join(REPO, 'multilang/resources/kinesis-spout.cjs');
const SPOUT_LICENSES = join(REPO, 'multilang/resources/kinesis-spout.THIRD-PARTY-LICENSES.txt');
const SPOUT_SCHEMA = join(REPO, 'multilang/resources/kinesis-spout.schema.json');
/** The KCL tools' DynamoDB client, packed beside the bundle. */
export const SPOUT_DYNAMODB = join(REPO, 'multilang/resources/kinesis-spout-dynamodb.cjs');
export const MODULE_DIR = join(REPO, 'storm');
const MODULE_JAR = 'kinesis-shell-spout-0.1.0.jar';
/** Where `mvn install` puts the module, and where the examples' builds take it from. */
export const INSTALLED_MODULE_JAR = join(
  homedir(),
  '.m2/repository/io/github/kinesisshellspout/kinesis-shell-spout/0.1.0',
  MODULE_JAR,
);
const LOCK_STALE_MS = 15 * 60_000;

/**
 * The Storm the examples are built and run against: `STORM_VERSION` (e.g. 2.6.4, the oldest line
 * supported), else their pom's `storm.version`. The module in storm/ is always built against its pom's
 * (storm-client is provided): one jar for every supported Storm, as users get it.
 */
export const STORM_VERSION = stormVersion(process.env.STORM_VERSION);

function stormVersion(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^2\.\d+\.\d+$/.test(value)) throw new Error(`STORM_VERSION=${value}: expected a Storm 2.x version, e.g. 2.6.4`);
  return value;
}

/** The Storm version the examples run on: STORM_VERSION, else the Java example pom's. */
export function stormVersionInUse(): string {
  if (STORM_VERSION) return STORM_VERSION;
  const pom = readFileSync(join(REPO, 'topology-examples/java/pom.xml'), 'utf8');
  return /<storm\.version>([^<]+)<\/storm\.version>/.exec(pom)![1];
}

/** Whether the Storm in use is `major.minor` or newer. */
export function stormAtLeast(major: number, minor: number): boolean {
  const [m, n] = stormVersionInUse().split('.').map(Number);
  return m > major || (m === major && n >= minor);
}

/** Maven's arguments for the examples' builds: the Storm version, when one is chosen. */
const exampleArgs = (): string[] => (STORM_VERSION ? [`-Dstorm.version=${STORM_VERSION}`] : []);

export interface Build {
  /** The topology jar, first on the classpath: Storm's local mode extracts `resources/` from the first jar having it. */
  jar: string;
  /** Everything else the local mode needs (Storm itself), from `dependency:build-classpath`. */
  classpath: string[];
}

export async function mavenBuild(projectDir: string, jarName: string): Promise<Build> {
  if (!existsSync(SPOUT_SCRIPT)) throw new Error(`${SPOUT_SCRIPT} is missing: run \`npm run build\` first`);
  const jar = join(projectDir, 'target', jarName);
  const classpathFile = join(projectDir, 'target', 'classpath.txt');
  const stamp = join(projectDir, 'target', 'e2e-inputs.sha256');
  // One lock for all the examples: concurrent Maven runs filling one ~/.m2 can corrupt it.
  mkdirSync(join(REPO, 'topology-examples', 'target'), { recursive: true });
  await withLock(join(REPO, 'topology-examples', 'target', 'maven.lock'), () => {
    installModule();
    const hash = inputsHash(projectDir, [SPOUT_SCRIPT, INSTALLED_MODULE_JAR], exampleArgs());
    const upToDate =
      existsSync(jar) && existsSync(classpathFile) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash;
    if (upToDate) return;
    mvnOfflineFirst(projectDir, 'package', exampleArgs());
    writeFileSync(stamp, hash);
  });
  const classpath = readFileSync(classpathFile, 'utf8').trim().split(':').filter(Boolean);
  const client = STORM_VERSION && `storm-client-${STORM_VERSION}.jar`;
  if (client && !classpath.some((entry) => entry.endsWith(`/${client}`))) {
    throw new Error(`STORM_VERSION=${STORM_VERSION}, but ${classpathFile} has no ${client}`);
  }
  return { jar, classpath };
}

/** The Java module alone, installed (see installModule); resolves to its jar. */
export async function mavenInstallModule(): Promise<string> {
  if (!existsSync(SPOUT_SCRIPT)) throw new Error(`${SPOUT_SCRIPT} is missing: run \`npm run build\` first`);
  mkdirSync(join(REPO, 'topology-examples', 'target'), { recursive: true });
  await withLock(join(REPO, 'topology-examples', 'target', 'maven.lock'), installModule);
  return INSTALLED_MODULE_JAR;
}

/** `mvn package` of a project outside the repository (a user's topology), under the one Maven lock. */
export async function mavenPackage(projectDir: string): Promise<void> {
  await withLock(join(REPO, 'topology-examples', 'target', 'maven.lock'), () => mvnOfflineFirst(projectDir, 'package'));
}

/**
 * `mvn install` of storm/ (compiles, runs its JUnit tests, packs the bundle) unless the jar in the local
 * repository is the one built from the current inputs: another checkout may have installed its own.
 */
function installModule(): void {
  const built = join(MODULE_DIR, 'target', MODULE_JAR);
  const stamp = join(MODULE_DIR, 'target', 'e2e-inputs.sha256');
  const hash = inputsHash(MODULE_DIR, [SPOUT_SCRIPT, SPOUT_DYNAMODB, SPOUT_LICENSES, SPOUT_SCHEMA]);
  const upToDate =
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8') === hash &&
    existsSync(built) &&
    existsSync(INSTALLED_MODULE_JAR) &&
    readFileSync(built).equals(readFileSync(INSTALLED_MODULE_JAR));
  if (upToDate) return;
  mvnOfflineFirst(MODULE_DIR, 'install');
  writeFileSync(stamp, hash);
}

/** Offline first: once ~/.m2 holds everything, no registry is asked; a fresh machine falls back to online. */
function mvnOfflineFirst(cwd: string, goal: string, args: string[] = []): void {
  if (mvn(cwd, ['-q', '-o', ...args, goal]).status === 0) return;
  const online = mvn(cwd, ['-q', ...args, goal]);
  if (online.status !== 0) throw new Error(`mvn ${goal} failed in ${cwd}:\n${online.output.slice(-6000)}`);
}

function mvn(cwd: string, args: string[]): { status: number | null; output: string } {
  const result = spawnSync('mvn', ['-B', ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 15 * 60_000,
  });
  return {
    status: result.status,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`,
  };
}

function inputsHash(projectDir: string, extra: string[], mavenArgs: string[] = []): string {
  const hash = createHash('sha256');
  hash.update(mavenArgs.join('\0')).update('\0');
  const files = [join(projectDir, 'pom.xml'), ...extra, ...walk(join(projectDir, 'src'))].sort();
  for (const file of files) {
    hash.update(file).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path) : [path];
  });
}

/** Jest runs test files in parallel: two of them must not run Maven at once. */
async function withLock(lockDir: string, fn: () => void): Promise<void> {
  const owner = join(lockDir, 'pid');
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(owner, String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock left by a run killed mid-build would block every later run.
      if (isStale(lockDir, owner)) rmSync(lockDir, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

function isStale(lockDir: string, owner: string): boolean {
  const age = Date.now() - (statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
  if (age > LOCK_STALE_MS) return true;
  const pid = Number(existsSync(owner) ? readFileSync(owner, 'utf8') : NaN);
  if (!Number.isInteger(pid)) return age > 5_000; // its owner is between mkdir and writing the pid
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
