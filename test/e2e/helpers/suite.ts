/** What every end-to-end file sets up: the example's jar built, real ZooKeeper and kinesis-local, cleanup. */
import { join } from 'node:path';
import { createStream } from '../../helpers/kinesisAdmin';
import { startServices, uniqueName, type Services } from '../../helpers/fixture';
import { mavenBuild, REPO, type Build } from './maven';
import { removeScratch, stopAll } from './topology';

export interface Suite {
  services: Services;
  build: Build;
  newStream(shards: number): Promise<string>;
}

/** Registers the file's hooks; the returned object is filled in by beforeAll. */
export function e2eSuite(project: string, jar: string): Suite {
  const suite = {
    async newStream(shards: number): Promise<string> {
      const stream = uniqueName('stream');
      await createStream(suite.services.client, stream, shards);
      return stream;
    },
  } as Suite;
  beforeAll(async () => {
    // First run on a fresh machine downloads Storm from Maven Central.
    suite.build = await mavenBuild(join(REPO, project), jar);
    suite.services = await startServices();
  }, 15 * 60_000);
  afterEach(stopAll, 60_000);
  afterAll(async () => {
    await suite.services?.stop();
    removeScratch();
  });
  return suite;
}
