/**
 * `kinesis-spout deregister-consumer`: deregisters the stream consumer a fan-out configuration reads
 * through (the spout never does), after the operator confirms. Spouts still running in fan-out register
 * it again at their next subscription, so the topology is stopped first.
 */
import { streamNameOf } from '../config/config';
import { createKinesisClient } from '../kinesis/client';
import { consumerRefOf, deregisterConsumer, streamArnOf } from '../kinesis/consumer';
import { readToolConfig, selectStreams } from './application';
import { ExitCode } from './exitCodes';
import { confirm, type ToolIo } from './io';

export interface DeregisterOptions {
  config: string;
  /** With several streams: whose consumer (required then). */
  stream?: string;
  yes: boolean;
}

export async function runDeregisterConsumer(options: DeregisterOptions, io: ToolIo): Promise<number> {
  const [config] = selectStreams(readToolConfig(options.config), options.stream, 'deregister-consumer', false);
  const ref = consumerRefOf(config);
  const kinesis = createKinesisClient(config);
  try {
    const streamArn = await streamArnOf(kinesis, { streamName: streamNameOf(config), streamArn: config.streamArn });
    const what = 'consumerArn' in ref ? ref.consumerArn : `consumer ${ref.consumerName} of ${streamArn}`;
    io.out(
      `Deregistering ${what}: its subscriptions end, and AWS stops charging for it. Stop the topology first: spouts still reading with readMode "fanOut" register it again.`,
    );
    const declined = await confirm(io, {
      yes: options.yes,
      question: 'Deregister it?',
      nothing: 'nothing deregistered',
    });
    if (declined !== undefined) return declined;
    const existed = await deregisterConsumer(kinesis, streamArn, ref);
    io.out(existed ? `deregistered ${what}` : `${what} was not registered: nothing to do`);
    return ExitCode.Ok;
  } finally {
    kinesis.destroy();
  }
}
