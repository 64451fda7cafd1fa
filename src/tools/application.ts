/**
 * Opens what the tools look at: the configuration (the spout's own `loadConfig`), a ZooKeeper session, the
 * application's state under `<root>/<applicationName>/<streamName>` (read through the spout's store) and a
 * Kinesis client. Nothing is created: an application that never started is an error, not a new one.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { loadConfig, streamConfigs, streamNameOf, type SpoutConfig } from '../config/config';
import { diagnosingConnect } from '../coordination/diagnose';
import { zooKeeperOptions } from '../coordination/sessionOptions';
import { basePath, CoordinationStore } from '../coordination/store';
import { ZkSession } from '../coordination/zk';
import type { ZooKeeper } from '../coordination/zooKeeper';
import type { Bootstrap } from '../core/position';
import { describeError, SpoutError } from '../errors';
import { createKinesisClient, type KinesisApi } from '../kinesis/client';
import type { StreamRef } from '../kinesis/shards';
import { ExitCode, ToolError } from './exitCodes';
import { isObject } from '../core/json';

export interface Application {
  config: SpoutConfig;
  stream: StreamRef;
  zk: ZooKeeper;
  store: CoordinationStore;
  bootstrap: Bootstrap;
  kinesis: KinesisApi;
  close(): void;
}

/** The file holds the `kinesis.spout` map itself, or a topology conf with that key (C4). */
export function readToolConfig(file: string): SpoutConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ToolError(
      ExitCode.Usage,
      `--config ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : describeError(err)}`,
    );
  }
  if (!isObject(parsed))
    throw new ToolError(
      ExitCode.Usage,
      `--config ${file}: expected a JSON object (the "kinesis.spout" map, or a topology conf with a "kinesis.spout" key)`,
    );
  const conf = 'kinesis.spout' in parsed ? parsed : { 'kinesis.spout': parsed };
  try {
    return loadConfig(conf);
  } catch (err) {
    throw new ToolError(
      ExitCode.Usage,
      `--config ${file}: ${err instanceof SpoutError ? err.message : describeError(err)}`,
    );
  }
}

/**
 * The streams a tool looks at: the one named by `--stream` (by name, or the tail of its ARN), else every
 * configured stream when `all` is allowed (status), else the only one; with several and no `--stream`, a
 * usage error listing them.
 */
export function selectStreams(
  config: SpoutConfig,
  stream: string | undefined,
  tool: string,
  all: boolean,
): SpoutConfig[] {
  const configs = streamConfigs(config);
  const names = configs.map((own) => streamNameOf(own));
  if (stream !== undefined) {
    const i = names.indexOf(stream);
    if (i < 0)
      throw new ToolError(
        ExitCode.Usage,
        `${tool}: --stream ${JSON.stringify(stream)}: the configuration reads ${names.join(', ')}`,
      );
    return [configs[i]];
  }
  if (configs.length > 1 && !all)
    throw new ToolError(
      ExitCode.Usage,
      `${tool}: --stream <name> is required: the configuration reads several streams (${names.join(', ')})`,
    );
  return configs;
}

/** Who the tools are in what they write (a checkpoint's `owner`, a lease taken inside a reset's transaction). */
export function toolMemberId(): string {
  return `tool-${hostname()}-${process.pid}`;
}

export async function openApplication(config: SpoutConfig): Promise<Application> {
  const app = await connectApplication(config);
  if (app.bootstrap) return { ...app, bootstrap: app.bootstrap };
  const missing = await missingApplication(app.zk, config, app.store.base);
  app.close();
  throw missing;
}

/** As openApplication, but an application that never started (no bootstrap) is not an error: `import` creates it. */
export async function connectApplication(
  config: SpoutConfig,
): Promise<Omit<Application, 'bootstrap'> & { bootstrap: Bootstrap | undefined }> {
  const { connect, root } = config.zookeeper;
  let zk: ZooKeeper;
  try {
    // The spout's own credentials: its nodes may be readable by them alone.
    zk = await diagnosingConnect((options) => ZkSession.connect(options))(zooKeeperOptions(config));
  } catch (err) {
    throw new ToolError(ExitCode.Failed, `cannot reach ZooKeeper at ${connect}: ${describeError(err)}`);
  }
  const stream: StreamRef = { streamName: streamNameOf(config), streamArn: config.streamArn };
  const store = new CoordinationStore(zk, basePath(root, config.applicationName, stream.streamName), toolMemberId());
  try {
    // Nothing is trusted from nodes others may have made or may change.
    await store.verifyProtection().catch((err: unknown) => {
      if (!(err instanceof SpoutError) || err.retriable) throw err;
      throw new ToolError(ExitCode.Failed, `not trusting the state at ${store.base}: ${err.message}`);
    });
    const bootstrap = await store.readBootstrap();
    const kinesis = createKinesisClient(config);
    return {
      config,
      stream,
      zk,
      store,
      bootstrap,
      kinesis,
      close() {
        zk.close();
        kinesis.destroy();
      },
    };
  } catch (err) {
    zk.close();
    throw err;
  }
}

/** Names what does exist under the root, so a typo in applicationName or zookeeper.root is easy to see. */
async function missingApplication(zk: ZooKeeper, config: SpoutConfig, base: string): Promise<ToolError> {
  const root = config.zookeeper.root.replace(/\/+$/, '') || '/';
  // Undefined when it cannot be listed: a root made by another application lets others add to it, not list it.
  const applications = await zk.getChildren(root).catch(() => undefined);
  const streams = await zk.getChildren(`${root === '/' ? '' : root}/${config.applicationName}`).catch(() => []);
  const found =
    streams.length > 0
      ? `; application ${config.applicationName} has state for stream(s): ${streams.join(', ')}`
      : applications === undefined
        ? `; ${root} cannot be listed with these credentials`
        : applications.length > 0
          ? `; applications under ${root}: ${applications.sort().join(', ')}`
          : `; nothing under ${root}`;
  return new ToolError(
    ExitCode.NoApplication,
    `no application state at ${base} in ZooKeeper ${config.zookeeper.connect} (the spout creates it at its first start)${found}. Check applicationName, streamName and zookeeper.root`,
  );
}
