/**
 * The scale run's producer, out of the driver's process (producerChild.ts): told the open shards after each
 * listing; the ids it put collected by `sync()` (into `putIds`) when they are needed, i.e. for lost().
 */
import { ChildLink, type ChildUsage } from './ipc';
import type { Target } from './producerChild';

export class Producer {
  readonly putIds = new Set<string>();
  putFailures = 0;

  private constructor(private readonly link: ChildLink) {}

  static async start(server: { endpoint: string; region: string }, stream: string, everyMs: number): Promise<Producer> {
    return new Producer(
      await ChildLink.start('producer', 'producerChild.ts', [server.endpoint, server.region, stream, String(everyMs)]),
    );
  }

  get pid(): number {
    return this.link.pid;
  }

  get skewMs(): number {
    return this.link.skewMs;
  }

  /** Put to these from now on, a round at once. */
  setOpen(shards: Target[]): Promise<void> {
    return this.link.call('open', { shards });
  }

  start(): Promise<void> {
    return this.link.call('start');
  }

  /** Resolves once no put is under way. */
  pause(): Promise<void> {
    return this.link.call('pause');
  }

  /** Collects the ids put since the last sync, and the failures. */
  async sync(): Promise<void> {
    const { ids, putFailures } = await this.link.call<{ ids: string[]; putFailures: number }>('ids');
    for (const id of ids) this.putIds.add(id);
    this.putFailures = putFailures;
  }

  usage(reset = false): Promise<ChildUsage> {
    return this.link.call<ChildUsage>('usage', { reset });
  }

  stop(): Promise<void> {
    return this.link.stop();
  }
}
