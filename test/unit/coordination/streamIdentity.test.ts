import { identityMismatch } from '../../../src/coordination/streamIdentity';
import { ErrorCode } from '../../../src/errors';

const arn = 'arn:aws:kinesis:eu-west-1:123456789012:stream/orders';
const bootstrap = { streamArn: arn, streamCreatedMs: Date.parse('2026-01-01T00:00:00Z') };

describe('identityMismatch (the stream is the one the checkpoints belong to)', () => {
  it('accepts the same ARN created at the same time', () => {
    expect(
      identityMismatch(bootstrap, { streamArn: arn, createdMs: bootstrap.streamCreatedMs }, '/ks/app/orders'),
    ).toBe(undefined);
  });

  it('refuses a stream re-created under the same name, saying when each was created and what to do', () => {
    const recreated = { streamArn: arn, createdMs: Date.parse('2026-03-01T00:00:00Z') };
    const refusal = identityMismatch(bootstrap, recreated, '/ks/app/orders');
    expect(refusal?.code).toBe(ErrorCode.StreamMismatch);
    expect(refusal?.message).toContain('created 2026-03-01T00:00:00.000Z');
    expect(refusal?.message).toContain('belong to a stream created 2026-01-01T00:00:00.000Z');
    expect(refusal?.message).toContain('remove that ZooKeeper path to start over, or use another applicationName');
  });

  it('refuses another stream (another ARN) even created at the same time', () => {
    const other = { streamArn: `${arn}-2`, createdMs: bootstrap.streamCreatedMs };
    expect(identityMismatch(bootstrap, other, '/ks/app/orders')?.message).toContain(`refusing to read ${arn}-2`);
  });
});
