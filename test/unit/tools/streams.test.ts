/** The tools with several streams: `--stream` picks one; status shows all without it, reset and deregister-consumer need it. */
import { validateConfig } from '../../../src/config/config';
import { selectStreams } from '../../../src/tools/application';
import { parseToolArgs } from '../../../src/tools/args';
import { ExitCode, ToolError } from '../../../src/tools/exitCodes';

const base = { region: 'us-east-1', applicationName: 'a', zookeeper: { connect: 'z:1' } };
const several = validateConfig({
  ...base,
  streams: [{ streamName: 'orders' }, { streamArn: 'arn:aws:kinesis:eu-west-1:123456789012:stream/clicks' }],
});

const usage = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).exitCode).toBe(ExitCode.Usage);
    return (err as Error).message;
  }
  throw new Error('accepted');
};

describe('--stream', () => {
  it('is parsed by every tool', () => {
    expect(parseToolArgs('status', ['--config', 'c.json', '--stream', 'orders'])).toMatchObject({ stream: 'orders' });
    expect(parseToolArgs('reset', ['--config', 'c.json', '--stream=clicks', '--to', 'LATEST'])).toMatchObject({
      stream: 'clicks',
    });
    expect(parseToolArgs('deregister-consumer', ['--config', 'c.json', '--stream', 'x'])).toMatchObject({
      stream: 'x',
    });
    expect(parseToolArgs('status', ['--config', 'c.json'])).not.toHaveProperty('stream');
    expect(usage(() => parseToolArgs('status', ['--config', 'c.json', '--stream']))).toBe(
      'status: --stream needs a value',
    );
  });

  it('picks a stream by name or by its ARN tail; status takes all without it, reset needs it', () => {
    expect(selectStreams(several, 'clicks', 'reset', false).map((c) => c.streamArn)).toEqual([
      'arn:aws:kinesis:eu-west-1:123456789012:stream/clicks',
    ]);
    expect(selectStreams(several, undefined, 'status', true).map((c) => c.streamName ?? c.streamArn)).toEqual([
      'orders',
      'arn:aws:kinesis:eu-west-1:123456789012:stream/clicks',
    ]);
    expect(usage(() => selectStreams(several, undefined, 'reset', false))).toBe(
      'reset: --stream <name> is required: the configuration reads several streams (orders, clicks)',
    );
    expect(usage(() => selectStreams(several, 'views', 'status', true))).toBe(
      'status: --stream "views": the configuration reads orders, clicks',
    );
    const one = validateConfig({ ...base, streamName: 'orders' });
    expect(selectStreams(one, undefined, 'reset', false)).toEqual([one]);
    expect(selectStreams(one, 'orders', 'reset', false)).toEqual([one]);
  });
});
