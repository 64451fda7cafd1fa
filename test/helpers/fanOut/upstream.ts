/**
 * The front's side of kinesis-local: its own JSON calls (GetRecords, ListShards...) over HTTP/1.1, and the
 * requests of others passed on unchanged.
 */
import { Agent, type IncomingHttpHeaders, request as httpRequest } from 'node:http';

export const AMZ_JSON = 'application/x-amz-json-1.1';
export const TARGET_PREFIX = 'Kinesis_20131202.';

/** An answer of kinesis-local that is not a success, as AWS shapes it (`__type`, `message`). */
export class KinesisError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = type;
  }
}

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Upstream {
  readonly endpoint: string;
  /** One operation, answered with its JSON or thrown as a KinesisError. */
  call<T = Record<string, unknown>>(operation: string, body: Record<string, unknown>): Promise<T>;
  /** Passes a request on as it came (method, path, headers, body). */
  forward(method: string, path: string, headers: IncomingHttpHeaders, body: Buffer): Promise<RawAnswer>;
  /** Operations the front itself sent, by name. */
  readonly calls: ReadonlyMap<string, number>;
  close(): void;
}

// kinesis-local does not check signatures, but wants an Authorization header of the right shape.
const AUTHORIZATION =
  'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host, Signature=00';

export function upstream(endpoint: string): Upstream {
  const url = new URL(endpoint);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const calls = new Map<string, number>();

  const forward = (method: string, path: string, headers: IncomingHttpHeaders, body: Buffer) =>
    new Promise<RawAnswer>((resolve, reject) => {
      const outgoing = httpRequest({ host: url.hostname, port: url.port, method, path, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 502, headers: response.headers, body: Buffer.concat(chunks) }),
        );
        response.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  return {
    endpoint,
    calls,
    forward,
    async call<T>(operation: string, body: Record<string, unknown>): Promise<T> {
      calls.set(operation, (calls.get(operation) ?? 0) + 1);
      const payload = Buffer.from(JSON.stringify(body));
      const answer = await forward(
        'POST',
        '/',
        {
          host: url.host,
          'content-type': AMZ_JSON,
          'content-length': String(payload.length),
          'x-amz-target': `${TARGET_PREFIX}${operation}`,
          'x-amz-date': '20260101T000000Z',
          authorization: AUTHORIZATION,
        },
        payload,
      );
      const parsed = parseJson(answer.body);
      if (answer.status !== 200) {
        const type = String(parsed.__type ?? `HTTP ${answer.status}`).replace(/^.*#/, '');
        throw new KinesisError(answer.status, type, String(parsed.message ?? parsed.Message ?? ''));
      }
      return parsed as T;
    },
    close: () => agent.destroy(),
  };
}

export function parseJson(bytes: Buffer): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
