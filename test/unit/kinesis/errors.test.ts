import { isThrottling, kinesisProblem } from '../../../src/kinesis/errors';

const named = (name: string) => Object.assign(new Error(name), { name });

describe('kinesisProblem', () => {
  it('names the fix and reports at once what waiting cannot fix', () => {
    const denied = kinesisProblem(named('AccessDeniedException'), 'arn:aws:kinesis:eu-west-1:123456789012:stream/s');
    expect(denied).toMatchObject({ transient: false, reportAfter: 1 });
    expect(denied.fix).toContain('kinesis:GetRecords');
    expect(kinesisProblem(named('KMSAccessDeniedException'), 's').fix).toContain('kms:Decrypt');
    expect(kinesisProblem(named('ExpiredTokenException'), 's').fix).toContain('credential');
  });

  it('tells credentials that were not found from credentials that were refused', () => {
    const none = kinesisProblem(named('CredentialsProviderError'), 's');
    expect(none).toMatchObject({ transient: false, reportAfter: 1 });
    expect(none.fix).toMatch(/^no AWS credentials were found/);
    expect(none.fix).not.toContain('refused');
    expect(kinesisProblem(named('UnrecognizedClientException'), 's').fix).toContain('refused');
  });

  it('reports what usually passes only once it persists', () => {
    expect(kinesisProblem(named('ProvisionedThroughputExceededException'), 's')).toMatchObject({
      transient: true,
      reportAfter: 5,
    });
    expect(kinesisProblem(named('InternalFailure'), 's').reportAfter).toBeGreaterThan(1);
    expect(kinesisProblem(named('ResourceNotFoundException'), 's').reportAfter).toBeGreaterThan(1);
  });
});

describe('isThrottling (counted as throttledCalls, logged at debug by the reader)', () => {
  it('tells throttling, of Kinesis or of KMS behind it, from other errors', () => {
    expect(isThrottling({ name: 'ProvisionedThroughputExceededException' })).toBe(true);
    expect(isThrottling({ name: 'LimitExceededException' })).toBe(true);
    expect(isThrottling({ name: 'KMSThrottlingException' })).toBe(true);
    expect(isThrottling({ name: 'ExpiredIteratorException' })).toBe(false);
    expect(isThrottling(undefined)).toBe(false);
  });
});
