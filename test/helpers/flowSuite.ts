/**
 * The hooks a test file of flows needs: real servers started once for the file, and after each test the
 * flow it made stopped and whatever it asked to close (fault proxies) closed.
 */
import { createStream } from './kinesisAdmin';
import { servicesForFile, uniqueName, type Services } from './fixture';
import { Flow } from './flow';

export function flowSuite() {
  let current: Flow | undefined;
  const toClose: { close(): Promise<void> }[] = [];
  const services = servicesForFile(async () => {
    await current?.stop();
    current = undefined;
    for (const thing of toClose.splice(0)) await thing.close();
  });
  const suite = {
    get services(): Services {
      return services();
    },
    async newStream(shards: number): Promise<string> {
      const stream = uniqueName('stream');
      await createStream(suite.services.client, stream, shards);
      return stream;
    },
    /** Spout processes on `stream`, stopped after the test. */
    flow(stream: string, overrides: Record<string, unknown> = {}, app = uniqueName('app')): Flow {
      current = new Flow(suite.services, stream, app, overrides);
      return current;
    },
    /** Closed after the test. */
    closeAfter<T extends { close(): Promise<void> }>(thing: T): T {
      toClose.push(thing);
      return thing;
    },
  };
  return suite;
}
