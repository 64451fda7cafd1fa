/** A valid spout configuration for unit tests that need one and care about none of its values. */
import { loadConfig, type SpoutConfig } from '../../../src/config/config';

export function testConfig(): SpoutConfig {
  return loadConfig({
    'kinesis.spout': {
      streamName: 's',
      region: 'us-east-1',
      applicationName: 'app',
      zookeeper: { connect: 'zk:2181' },
    },
  });
}
