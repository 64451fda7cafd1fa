/**
 * A Storm home laid out like Storm's binary distribution, in a temp dir: lib/ (daemons and command
 * classes), lib-worker/ (what each worker JVM runs on), conf/storm.yaml, log4j2/ (the daemons' and the
 * workers' logging). Maven fills lib/ and lib-worker/ from test/cluster/storm-home/pom.xml.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const POM_DIR = join(__dirname, '..', 'storm-home');

export interface StormHome {
  dir: string;
  conf: string;
  /** Nimbus, the supervisor and the command classes run on this (as `storm nimbus`, `storm rebalance` do). */
  daemonClasspath: string;
  /** What `storm jar` and every worker run on: storm-client and its dependencies only. */
  clientClasspath: string;
  logDir: string;
  localDir: string;
}

export interface Ports {
  nimbus: number;
  supervisor: number;
  /** One per worker slot. */
  slots: number[];
}

export function assembleStormHome(dir: string): StormHome {
  mkdirSync(dir, { recursive: true });
  copyDependencies('storm-core', join(dir, 'lib'));
  copyDependencies('storm-client', join(dir, 'lib-worker'));
  const conf = join(dir, 'conf');
  const logDir = join(dir, 'logs');
  const log4j = join(dir, 'log4j2');
  for (const d of [conf, logDir, log4j]) mkdirSync(d, { recursive: true });
  writeFileSync(join(log4j, 'cluster.xml'), CLUSTER_LOG4J);
  writeFileSync(join(log4j, 'worker.xml'), WORKER_LOG4J);
  return {
    dir,
    conf,
    daemonClasspath: [join(dir, 'lib', '*'), conf].join(':'),
    clientClasspath: [join(dir, 'lib-worker', '*'), conf].join(':'),
    logDir,
    localDir: join(dir, 'storm-local'),
  };
}

/** Offline first: once ~/.m2 holds Storm, no registry is asked; a fresh machine falls back to Maven Central. */
function copyDependencies(artifact: string, into: string): void {
  const args = [
    '-B',
    '-q',
    'dependency:copy-dependencies',
    `-Dstorm.home.artifact=${artifact}`,
    `-Dstorm.home.dir=${into}`,
  ];
  let result = spawnSync('mvn', ['-o', ...args], { cwd: POM_DIR, encoding: 'utf8', timeout: 10 * 60_000 });
  if (result.status !== 0) result = spawnSync('mvn', args, { cwd: POM_DIR, encoding: 'utf8', timeout: 10 * 60_000 });
  if (result.status !== 0)
    throw new Error(
      `mvn dependency:copy-dependencies (${artifact}) failed:\n${`${result.stdout}${result.stderr}`.slice(-4000)}`,
    );
}

/**
 * storm.yaml (JSON is YAML). Every port a free one chosen by the test, every connection to 127.0.0.1
 * (Storm's servers, Nimbus's and the supervisor's thrift and the workers' netty, still listen on every
 * interface: Storm 2.8 has no setting for their bind address), every state folder inside the home.
 * Heaps are small and timings short so that the cluster fits a busy 2-core machine.
 */
export function writeStormYaml(
  home: StormHome,
  zookeeperPort: number,
  ports: Ports,
  extra: Record<string, unknown> = {},
): void {
  const conf: Record<string, unknown> = {
    'storm.zookeeper.servers': ['127.0.0.1'],
    'storm.zookeeper.port': zookeeperPort,
    'storm.zookeeper.root': '/storm',
    'storm.local.dir': home.localDir,
    'storm.local.hostname': '127.0.0.1',
    'storm.health.check.dir': join(home.dir, 'healthchecks'),
    'nimbus.seeds': ['127.0.0.1'],
    'nimbus.thrift.port': ports.nimbus,
    // Nimbus looks at heartbeats and rebalances this often (default 10 s).
    'nimbus.monitor.freq.secs': 2,
    'supervisor.thrift.port': ports.supervisor,
    'supervisor.slots.ports': ports.slots,
    'worker.heap.memory.mb': 320,
    'worker.childopts': '-Xmx%HEAP-MEM%m -XX:+UseSerialGC',
    'topology.worker.logwriter.childopts': '-Xmx48m -XX:+UseSerialGC -XX:TieredStopAtLevel=1',
    ...extra,
  };
  writeFileSync(join(home.conf, 'storm.yaml'), `${JSON.stringify(conf, null, 2)}\n`);
}

// Nimbus and the supervisor log to stdout, which the test sends to one file per daemon.
const CLUSTER_LOG4J = `<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="warn">
  <Appenders>
    <Console name="out" target="SYSTEM_OUT">
      <PatternLayout pattern="%d{HH:mm:ss.SSS} %-5p %c{1} [%t] %m%n"/>
    </Console>
  </Appenders>
  <Loggers>
    <Root level="info"><AppenderRef ref="out"/></Root>
  </Loggers>
</Configuration>
`;

// The supervisor starts each worker under LogWriter with these system properties set; one log file per
// worker slot, where ShellSpout's "Launched subprocess with pid" and the spouts' own log lines land.
const WORKER_LOG4J = `<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="warn" shutdownHook="disable">
  <Appenders>
    <File name="worker" append="true"
          fileName="\${sys:workers.artifacts}/\${sys:storm.id}/\${sys:worker.port}/\${sys:logfile.name}">
      <PatternLayout pattern="%d{HH:mm:ss.SSS} %-5p %c{1} [%t] %m%n"/>
    </File>
  </Appenders>
  <Loggers>
    <Root level="info"><AppenderRef ref="worker"/></Root>
  </Loggers>
</Configuration>
`;
