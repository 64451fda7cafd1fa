/** What a ZooKeeper answer means: which outcomes count as handled, which are retriable, and what an operator can do about a refusal. */
import zookeeper from 'node-zookeeper-client';
import { ErrorCode, SpoutError } from '../errors';
import { NewerCode } from './clientCodes';

export const Code = zookeeper.Exception;

/**
 * Outcomes in which a server handled the request with our session valid. For a write, that server is the
 * leader: followers forward every write, and these checks run in the leader's request pipeline.
 */
export const ANSWERED: ReadonlySet<number> = new Set([
  Code.OK,
  Code.NO_NODE,
  Code.NODE_EXISTS,
  Code.BAD_VERSION,
  Code.NOT_EMPTY,
]);

export function zkCode(err: unknown): number | undefined {
  return typeof (err as { getCode?: unknown })?.getCode === 'function'
    ? (err as { getCode(): number }).getCode()
    : undefined;
}

/** What the operator can do about an answer that retrying alone will not change. */
export const REFUSALS: ReadonlyMap<number, string> = new Map([
  [
    Code.NO_AUTH,
    "the node's ACL refuses these ZooKeeper credentials (NO_AUTH): the state was created with other ones. Use the credentials it was created with " +
      '(kinesis.spout.zookeeper.auth, or a fixed storm.zookeeper.topology.auth.payload), or another zookeeper.root or applicationName',
  ],
  [
    Code.AUTH_FAILED,
    'ZooKeeper refused the credentials (AUTH_FAILED): check kinesis.spout.zookeeper.auth (or storm.zookeeper.topology.auth.payload)',
  ],
  [
    NewerCode.SESSION_CLOSED_REQUIRE_SASL_AUTH,
    "the ensemble requires SASL authentication (sessionRequireClientSASLAuth, or enforce.auth.schemes=sasl), which this spout's ZooKeeper client (node-zookeeper-client) cannot do: " +
      'give the spout an ensemble (kinesis.spout.zookeeper.connect) that accepts digest authentication (kinesis.spout.zookeeper.auth) or none',
  ],
]);

export function wrap(err: unknown, what: string): SpoutError {
  const code = zkCode(err);
  const retriable = code === Code.CONNECTION_LOSS || code === Code.OPERATION_TIMEOUT;
  const refusal = code === undefined ? undefined : REFUSALS.get(code);
  const message = `ZooKeeper ${what} failed: ${(err as Error)?.message ?? String(err)}${refusal ? `; ${refusal}` : ''}`;
  return new SpoutError(ErrorCode.ZooKeeper, message, { retriable, cause: err });
}

/** The code of the answer a SpoutError made by `wrap` carries. */
export function wrappedCode(err: unknown): number | undefined {
  return zkCode((err as { cause?: unknown })?.cause);
}

/** An error carrying a ZooKeeper code the way the client's own do, for outcomes we decide ourselves. */
export function coded(code: number, message: string): Error {
  return Object.assign(new Error(message), { getCode: () => code });
}

/** A code a server answered that this operation does not expect (e.g. NOT_EMPTY for a remove). */
export function unexpected(code: number, what: string): SpoutError {
  return wrap(coded(code, `unexpected answer ${code}`), what);
}

/** How a connect that got no session in time fails (diagnose.ts finds out why). */
export const NO_SESSION = 'could not connect to ZooKeeper';

export function isNoSession(err: unknown): boolean {
  return err instanceof SpoutError && err.code === ErrorCode.ZooKeeper && err.message.startsWith(NO_SESSION);
}
