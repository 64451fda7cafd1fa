/**
 * What a Kinesis error means for the operator: whether waiting can fix it, and what to do. Errors that
 * only retrying fixes (throttling, a 500) are reported after they persist; the others at once.
 */
export interface KinesisProblem {
  /** The error's name, as the SDK gives it. */
  name: string;
  /** True when the cause is outside us and usually passes (throttling, a server error, the network). */
  transient: boolean;
  /** What the operator can do. */
  fix: string;
  /** After how many failures in a row it is worth an `error` in the Storm UI. */
  reportAfter: number;
}

const KMS = [
  'KMSAccessDeniedException',
  'KMSDisabledException',
  'KMSInvalidStateException',
  'KMSNotFoundException',
  'KMSOptInRequired',
  'KMSThrottlingException',
];
const CREDENTIALS = [
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
  'InvalidClientTokenId',
  'MissingAuthenticationToken',
];

/** Errors that mean Kinesis (or KMS behind it) refused a call for throughput, not that something is wrong. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'LimitExceededException',
  'KMSThrottlingException',
]);

export function isThrottling(err: unknown): boolean {
  return THROTTLING.has((err as { name?: string } | undefined)?.name ?? '');
}

/**
 * The AWS SDK found no credentials: what to do, for the spout (on a worker) and the tools (wherever they run),
 * which both take the SDK's default chain.
 */
export const NO_CREDENTIALS_FIX =
  "no AWS credentials were found on this host (the SDK's default chain: environment, profile, instance or container role): " +
  "set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE in the environment of the process (for the spout, its worker's), " +
  'or give the host a role (instance profile, EKS pod identity)';

/** A Kinesis error, or the SDK's own before any call (no credentials): an answer the operator can act on. */
export function isActionable(err: unknown, problem: KinesisProblem): boolean {
  if (problem.transient) return false;
  return (err as { $metadata?: unknown })?.$metadata !== undefined || problem.name === 'CredentialsProviderError';
}

export function kinesisProblem(err: unknown, stream: string): KinesisProblem {
  const name = (err as { name?: string })?.name ?? 'Error';
  // Fan-out's errors (consumer.ts) carry their own.
  const own = (err as { problem?: KinesisProblem } | undefined)?.problem;
  if (own) return own;
  if (name === 'AccessDeniedException') {
    return {
      name,
      transient: false,
      reportAfter: 1,
      fix: `grant the worker's role kinesis:ListShards, kinesis:DescribeStreamSummary, kinesis:GetShardIterator and kinesis:GetRecords on ${stream}`,
    };
  }
  if (KMS.includes(name)) {
    return {
      name,
      transient: name === 'KMSThrottlingException',
      reportAfter: name === 'KMSThrottlingException' ? 5 : 1,
      fix: `the stream is encrypted: the worker's role needs kms:Decrypt on the stream's key, and the key must be enabled (${stream})`,
    };
  }
  if (name === 'CredentialsProviderError') {
    return {
      name,
      transient: false,
      reportAfter: 1,
      fix: NO_CREDENTIALS_FIX,
    };
  }
  if (CREDENTIALS.includes(name)) {
    return {
      name,
      transient: false,
      reportAfter: 1,
      fix: 'the AWS credentials were refused: check the default credential chain on the worker host (and assumeRoleArn)',
    };
  }
  if (name === 'ResourceNotFoundException') {
    // Also seen for a moment around resharding; a listing decides what it means.
    return {
      name,
      transient: false,
      reportAfter: 3,
      fix: `check streamName/streamArn, region and endpoint: ${stream} is not there`,
    };
  }
  return {
    name,
    transient: true,
    reportAfter: 5,
    fix: 'retrying with backoff; check the network path to the Kinesis endpoint if this lasts',
  };
}
