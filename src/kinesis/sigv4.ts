/**
 * AWS Signature Version 4 for the lean GetRecords path (leanGetRecords.ts): a POST with a JSON body to a
 * path without a query, signed in headers. The signing key (four HMACs) depends only on the secret key,
 * the day, the region and the service, so it is derived once and kept until one of them changes; a call
 * then costs two SHA-256 (the body, the canonical request) and one HMAC. The SDK's own signer
 * (`@smithy/signature-v4`) is the reference: test/unit/kinesis/sigv4.test.ts signs the same requests both
 * ways and compares them byte for byte.
 */
import { createHash, createHmac } from 'node:crypto';

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignableRequest {
  method: string;
  /** Already normalized (`/` for Kinesis): only paths without `.`, `..`, empty segments or characters to escape. */
  path: string;
  /** Lower-case names, every one signed (the caller sends only headers SigV4 signs, plus `authorization`). */
  headers: Record<string, string>;
  body: string;
}

export interface Signed {
  /** `authorization`, `x-amz-date`, `x-amz-content-sha256` and, with a session token, `x-amz-security-token` added. */
  headers: Record<string, string>;
  canonicalRequest: string;
  stringToSign: string;
  signature: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

/** `20261207T011546Z` and `20261207`, as SigV4 writes a date. */
export function sigV4Dates(date: Date): { longDate: string; shortDate: string } {
  const iso = date.toISOString(); // 2026-12-07T01:15:46.123Z
  const shortDate = iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10);
  return { longDate: `${shortDate}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`, shortDate };
}

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export class SigV4Signer {
  private key: { secret: string; shortDate: string; region: string; service: string; key: Buffer } | undefined;

  /** The signing key of (secret, day, region, service), derived at the first call of the day and reused. */
  signingKey(secret: string, shortDate: string, region: string, service: string): Buffer {
    const cached = this.key;
    if (
      cached &&
      cached.shortDate === shortDate &&
      cached.secret === secret &&
      cached.region === region &&
      cached.service === service
    )
      return cached.key;
    const dateKey = createHmac('sha256', `AWS4${secret}`).update(shortDate).digest();
    const regionKey = createHmac('sha256', dateKey).update(region).digest();
    const serviceKey = createHmac('sha256', regionKey).update(service).digest();
    const key = createHmac('sha256', serviceKey).update('aws4_request').digest();
    this.key = { secret, shortDate, region, service, key };
    return key;
  }

  sign(request: SignableRequest, credentials: SigningCredentials, region: string, service: string, date: Date): Signed {
    const { longDate, shortDate } = sigV4Dates(date);
    const payloadHash = sha256Hex(request.body);
    const headers: Record<string, string> = { ...request.headers, 'x-amz-date': longDate };
    if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
    headers['x-amz-content-sha256'] = payloadHash;
    const names = Object.keys(headers).sort();
    let canonicalHeaders = '';
    for (const name of names) canonicalHeaders += `${name}:${canonicalValue(headers[name])}\n`;
    const signedHeaders = names.join(';');
    // No query: the empty line between the path and the headers.
    const canonicalRequest = `${request.method}\n${request.path}\n\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
    const scope = `${shortDate}/${region}/${service}/aws4_request`;
    const stringToSign = `${ALGORITHM}\n${longDate}\n${scope}\n${sha256Hex(canonicalRequest)}`;
    const signature = createHmac('sha256', this.signingKey(credentials.secretAccessKey, shortDate, region, service))
      .update(stringToSign, 'utf8')
      .digest('hex');
    headers.authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
    return { headers, canonicalRequest, stringToSign, signature };
  }
}

/** A header value as SigV4 reads it: line breaks as spaces, runs of spaces and tabs as one, trimmed. */
function canonicalValue(value: string): string {
  // The common case (a header value as this path builds it) has nothing to replace.
  if (!/[\r\n\t]| {2}|^ | $/.test(value)) return value;
  return value
    .replace(/[\r\n]/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}
