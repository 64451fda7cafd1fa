/** Puts records without pause (a small batch, a short sleep) until stopped, keeping what Kinesis accepted. */
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { putRecords } from '../../helpers/kinesisAdmin';
import type { Put } from '../../e2e/helpers/checks';

export interface PutAt extends Put {
  /** When PutRecords answered: a record put later than some instant was certainly put after it. */
  at: number;
}

export class ContinuousWriter {
  readonly put: PutAt[] = [];
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  private failure: Error | undefined;

  constructor(
    private readonly client: KinesisClient,
    private readonly stream: string,
    private readonly batch = 10,
    private readonly pauseMs = 400,
    private readonly keys = 24,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    let n = 0;
    while (this.running) {
      const input = Array.from({ length: this.batch }, () => {
        n += 1;
        return { partitionKey: `key-${n % this.keys}`, data: JSON.stringify({ n }) };
      });
      try {
        // putRecords retries entries Kinesis refused (a split closes the parent shard under our feet).
        const results = await putRecords(this.client, this.stream, input);
        const at = Date.now();
        results.forEach((r, i) => this.put.push({ ...r, ...input[i], at }));
      } catch (err) {
        // Such a batch is not counted as put: retried as new records, never as a gap in what we check.
        this.failure = err as Error;
      }
      await new Promise((r) => setTimeout(r, this.pauseMs));
    }
  }

  putBefore(instant: number): PutAt[] {
    return this.put.filter((r) => r.at <= instant);
  }

  async stop(): Promise<PutAt[]> {
    this.running = false;
    await this.loop;
    return this.put;
  }

  lastFailure(): Error | undefined {
    return this.failure;
  }
}
