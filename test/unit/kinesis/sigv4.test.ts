/**
 * The lean path's SigV4 (src/kinesis/sigv4.ts) against the SDK's own signer (`@smithy/signature-v4`, with the
 * SDK's SHA-256): the same requests signed both ways at fixed dates with fixed credentials give the same
 * headers, canonical request, string to sign and signature, byte for byte.
 */
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4, getCanonicalHeaders, getPayloadHash, prepareRequest } from '@smithy/signature-v4';
import { type GetRecordsRoute, getRecordsBody, getRecordsHeaders } from '../../../src/kinesis/leanGetRecords';
import { SigV4Signer, type SigningCredentials } from '../../../src/kinesis/sigv4';

const ROUTE: GetRecordsRoute = {
  protocol: 'https:',
  hostname: '123456789012.data-kinesis.eu-west-1.amazonaws.com',
  port: undefined,
  host: '123456789012.data-kinesis.eu-west-1.amazonaws.com',
  path: '/',
  region: 'eu-west-1',
  service: 'kinesis',
};

const PLAIN: SigningCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const SESSION: SigningCredentials = {
  ...PLAIN,
  accessKeyId: 'ASIAEXAMPLE',
  sessionToken: 'IQoJb3JpZ2luX2VjE//token+with/slashes==',
};

async function sdkSigned(
  headers: Record<string, string>,
  body: string,
  credentials: SigningCredentials,
  region: string,
  date: Date,
) {
  const sdk = new SignatureV4({ credentials, region, service: 'kinesis', sha256: Sha256 });
  const request = new HttpRequest({
    method: 'POST',
    protocol: ROUTE.protocol,
    hostname: ROUTE.hostname,
    path: '/',
    headers: { ...headers },
    body,
  });
  const signed = (await sdk.sign(request, { signingDate: date })) as HttpRequest;
  // The SDK's canonical request for the request it signed (its own functions, as signRequest calls them).
  const prepared = prepareRequest(signed);
  const payloadHash = await getPayloadHash(prepared, Sha256);
  const internals = sdk as unknown as {
    createCanonicalRequest(r: unknown, h: Record<string, string>, p: string): string;
    createStringToSign(longDate: string, scope: string, canonical: string, algorithm: string): Promise<string>;
  };
  const canonicalRequest = internals.createCanonicalRequest(
    { ...prepared, headers: signed.headers },
    getCanonicalHeaders(signed),
    payloadHash,
  );
  const longDate = signed.headers['x-amz-date'];
  const stringToSign = await internals.createStringToSign(
    longDate,
    `${longDate.slice(0, 8)}/${region}/kinesis/aws4_request`,
    canonicalRequest,
    'AWS4-HMAC-SHA256',
  );
  return { headers: signed.headers, canonicalRequest, stringToSign };
}

const DATES = [
  new Date(Date.UTC(2026, 11, 7, 1, 15, 46, 123)),
  new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999)),
  new Date(Date.UTC(2027, 0, 1, 0, 0, 0, 0)),
];

describe('SigV4 signer', () => {
  for (const [label, credentials] of [
    ['without a session token', PLAIN],
    ['with a session token', SESSION],
  ] as const)
    test(`a GetRecords as the lean path sends it, ${label}: the SDK's headers, canonical request and signature`, async () => {
      const signer = new SigV4Signer();
      for (const date of DATES)
        for (const input of [
          { ShardIterator: 'AAAAAAAAAAF+iterator/with==' },
          { ShardIterator: 'itér-ü-🙂', Limit: 1000, StreamARN: 'arn:aws:kinesis:eu-west-1:123456789012:stream/s' },
        ]) {
          const body = getRecordsBody(input);
          const headers = getRecordsHeaders(ROUTE, body);
          const ours = signer.sign(
            { method: 'POST', path: '/', headers, body },
            credentials,
            'eu-west-1',
            'kinesis',
            date,
          );
          const sdk = await sdkSigned(headers, body, credentials, 'eu-west-1', date);
          expect(ours.headers).toEqual(sdk.headers);
          expect(ours.canonicalRequest).toBe(sdk.canonicalRequest);
          expect(ours.stringToSign).toBe(sdk.stringToSign);
          expect(ours.headers.authorization).toBe(sdk.headers.authorization);
          expect(ours.headers.authorization).toContain(`Signature=${ours.signature}`);
          expect('x-amz-security-token' in ours.headers).toBe(credentials.sessionToken !== undefined);
        }
    });

  test("headers as the SDK's client sends them (its own, and values with runs of spaces) sign the same", async () => {
    const signer = new SigV4Signer();
    const body = '{"ShardIterator":"it"}';
    const headers = {
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'Kinesis_20131202.GetRecords',
      'content-length': String(body.length),
      'x-amz-user-agent': 'aws-sdk-js/3.1142.0',
      host: '127.0.0.1:4567',
      'amz-sdk-invocation-id': '36b78110-c338-4f6b-9fac-eccaab2320bc',
      'amz-sdk-request': '  attempt=1;   max=3 ',
      'x-odd': 'a\tb\r\nc',
    };
    const ours = signer.sign({ method: 'POST', path: '/', headers, body }, SESSION, 'us-east-1', 'kinesis', DATES[0]);
    const sdk = await sdkSigned(headers, body, SESSION, 'us-east-1', DATES[0]);
    expect(ours.canonicalRequest).toBe(sdk.canonicalRequest);
    expect(ours.headers.authorization).toBe(sdk.headers.authorization);
  });

  test('the signing key is derived once per day, region, service and secret, and again when one changes', () => {
    const signer = new SigV4Signer();
    const key = signer.signingKey('secret', '20261207', 'eu-west-1', 'kinesis');
    expect(signer.signingKey('secret', '20261207', 'eu-west-1', 'kinesis')).toBe(key);
    const nextDay = signer.signingKey('secret', '20261208', 'eu-west-1', 'kinesis');
    expect(nextDay).not.toEqual(key);
    expect(signer.signingKey('other', '20261208', 'eu-west-1', 'kinesis')).not.toEqual(nextDay);
    expect(signer.signingKey('other', '20261208', 'us-east-1', 'kinesis')).not.toEqual(nextDay);
  });
});
