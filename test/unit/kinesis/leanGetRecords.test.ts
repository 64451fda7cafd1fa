/**
 * The lean GetRecords path (src/kinesis/leanGetRecords.ts) on the wire, against a local HTTP server: each
 * request it sends verifies under the SDK's own signer (`@smithy/signature-v4`) with the credentials the
 * client's provider gave, session token included; credentials near their expiry are fetched again through
 * that provider; the route is learned from the SDK's first call and nothing else goes the lean way.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { DescribeStreamSummaryCommand, GetRecordsCommand, KinesisClient } from '@aws-sdk/client-kinesis';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { sharedAgents, sharedRawPool, sharedRequestHandler } from '../../../src/kinesis/client';
import { readGetRecordsLean, routeOf } from '../../../src/kinesis/leanGetRecords';

interface Seen {
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let endpoint: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      const payload = '{"Records":[],"NextShardIterator":"next","MillisBehindLatest":0}';
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': `r${seen.length}` });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  sharedAgents().http.destroy();
  sharedRawPool().destroy();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen.length = 0;
});

/** The SDK's authorization header for the request as the server received it, with `secret`. */
async function sdkAuthorization(request: Seen, secret: string, sessionToken: string | undefined): Promise<string> {
  const headers = Object.fromEntries(
    Object.entries(request.headers)
      .filter(([name]) => !['authorization', 'connection', 'x-amz-date'].includes(name))
      .map(([name, value]) => [name, String(value)]),
  );
  const accessKeyId = /Credential=([^/]+)\//.exec(String(request.headers.authorization))![1];
  const date = String(request.headers['x-amz-date']);
  const signingDate = new Date(
    `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
  );
  const sdk = new SignatureV4({
    credentials: { accessKeyId, secretAccessKey: secret, sessionToken },
    region: 'eu-west-1',
    service: 'kinesis',
    sha256: Sha256,
  });
  const signed = (await sdk.sign(
    new HttpRequest({
      method: 'POST',
      protocol: 'http:',
      hostname: '127.0.0.1',
      path: '/',
      headers,
      body: request.body,
    }),
    { signingDate },
  )) as HttpRequest;
  return signed.headers.authorization;
}

function leanClient(
  credentials: () => Promise<{
    accessKeyId: string;
    secretAccessKey: string;
    sessionToken?: string;
    expiration?: Date;
  }>,
) {
  const client = new KinesisClient({
    region: 'eu-west-1',
    endpoint,
    credentials,
    requestHandler: sharedRequestHandler(),
    maxAttempts: 3,
  });
  const ways: string[] = [];
  readGetRecordsLean(client, { pool: sharedRawPool(), observe: (way) => ways.push(way) });
  return { client, ways };
}

test("each lean request verifies under the SDK's signer, session token included; credentials cached while fresh", async () => {
  let fetched = 0;
  const { client, ways } = leanClient(async () => {
    fetched += 1;
    return {
      accessKeyId: 'ASIAEXAMPLE',
      secretAccessKey: 'secret/key+1',
      sessionToken: 'token//1==',
      expiration: new Date(Date.now() + 3_600_000),
    };
  });
  for (let i = 0; i < 4; i += 1) {
    const out = await client.send(new GetRecordsCommand({ ShardIterator: `it-${i}`, Limit: 100 }));
    expect(out).toMatchObject({ Records: [], NextShardIterator: 'next', MillisBehindLatest: 0 });
    expect(out.$metadata).toMatchObject({ httpStatusCode: 200, requestId: `r${i + 1}`, attempts: 1 });
  }
  expect(ways).toEqual(['sdk', 'lean', 'lean', 'lean']);
  expect(fetched).toBe(1);
  for (const request of seen) {
    expect(request.headers['x-amz-security-token']).toBe('token//1==');
    expect(request.headers.authorization).toBe(await sdkAuthorization(request, 'secret/key+1', 'token//1=='));
    // Every header the signature covers was sent (the SDK's signer adds a missing x-amz-content-sha256 itself).
    const signedNames = /SignedHeaders=([^,]+)/.exec(String(request.headers.authorization))![1].split(';');
    expect(signedNames.filter((name) => request.headers[name] === undefined)).toEqual([]);
  }
  // The lean requests: the body as the SDK serialized the first one.
  expect(seen[1].body).toBe('{"ShardIterator":"it-1","Limit":100}');
  expect(JSON.parse(seen[0].body)).toEqual({ ShardIterator: 'it-0', Limit: 100 });
  // Other commands stay the SDK's (and the server's answer is no stream summary: the SDK's error is fine).
  await client.send(new DescribeStreamSummaryCommand({ StreamName: 's' })).catch(() => undefined);
  expect(ways).toHaveLength(4);
});

test('credentials near their expiry are fetched again through the provider', async () => {
  let fetched = 0;
  const { client } = leanClient(async () => {
    fetched += 1;
    // Within the SDK's 5 minutes of refresh margin: every call asks for new ones.
    return {
      accessKeyId: `ASIA${fetched}`,
      secretAccessKey: `secret-${fetched}`,
      sessionToken: `token-${fetched}`,
      expiration: new Date(Date.now() + 120_000),
    };
  });
  for (let i = 0; i < 3; i += 1) await client.send(new GetRecordsCommand({ ShardIterator: `it-${i}` }));
  const keys = seen.map((r) => /Credential=([^/]+)\//.exec(String(r.headers.authorization))![1]);
  expect(new Set(keys).size).toBe(3);
  for (const request of seen) {
    const n = /Credential=ASIA(\d+)\//.exec(String(request.headers.authorization))![1];
    expect(request.headers['x-amz-security-token']).toBe(`token-${n}`);
    expect(request.headers.authorization).toBe(await sdkAuthorization(request, `secret-${n}`, `token-${n}`));
  }
});

test("the route is the SDK's request's: its host, and the region and service of its signature's scope", () => {
  const signedBy = (scope: string) =>
    `AWS4-HMAC-SHA256 Credential=AKID/20261207/${scope}/aws4_request, SignedHeaders=host, Signature=00`;
  const request = {
    protocol: 'https:',
    hostname: '123456789012.data-kinesis.eu-west-1.amazonaws.com',
    path: '/',
    headers: {
      host: '123456789012.data-kinesis.eu-west-1.amazonaws.com',
      authorization: signedBy('eu-west-1/kinesis'),
    },
  };
  expect(routeOf(request)).toEqual({
    protocol: 'https:',
    hostname: '123456789012.data-kinesis.eu-west-1.amazonaws.com',
    port: undefined,
    host: '123456789012.data-kinesis.eu-west-1.amazonaws.com',
    path: '/',
    region: 'eu-west-1',
    service: 'kinesis',
  });
  expect(
    routeOf({ ...request, hostname: '[::1]', port: 4567, headers: { ...request.headers, host: '[::1]:4567' } }),
  ).toMatchObject({ hostname: '::1', port: 4567, host: '[::1]:4567' });
  // What this path would not send as the SDK does stays the SDK's: a path prefix, a query, no SigV4, SigV4a.
  expect(routeOf({ ...request, path: '/prefix/' })).toBeUndefined();
  expect(routeOf({ ...request, query: { a: '1' } })).toBeUndefined();
  expect(routeOf({ ...request, headers: { host: request.headers.host } })).toBeUndefined();
  expect(
    routeOf({
      ...request,
      headers: {
        ...request.headers,
        authorization: 'AWS4-ECDSA-P256-SHA256 Credential=AKID/20261207/kinesis/aws4_request',
      },
    }),
  ).toBeUndefined();
});
