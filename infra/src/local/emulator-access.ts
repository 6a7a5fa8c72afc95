/**
 * Which requests the emulators answer: only a program's on this machine, never a web page's in
 * the operator's browser. fauxqs applies this rule to every request (fauxqs-server.ts);
 * LoopbackDynamoDBLocal.java applies the same rule, with the same refusals, to DynamoDB Local (the
 * tests send both emulators the same requests).
 *
 * The local service has no users, so the rule does not ask who calls, only how:
 * - from the loopback address (both bind 127.0.0.1; this holds should that ever change);
 * - with a loopback Host: a page whose own name an attacker points at 127.0.0.1 (DNS rebinding)
 *   sends that name, and is then same-origin with the emulator;
 * - with no Origin header, and never a CORS preflight: a browser sends Origin with every
 *   cross-origin request and every POST, and the SDK and the CLI never do. A refused preflight
 *   gives no page the right to send what follows;
 * - signed with AWS Signature Version 4: a form cannot send an Authorization header, and a page's
 *   fetch can send one to another origin only after a preflight, refused above. The signature is
 *   not checked: the local keys are fixed and published (LOCAL_CREDENTIALS), so a valid one would
 *   prove no more than a well-formed one, and checking it would cost every call a hash of its body.
 */

/** What the rule reads of a request. */
export interface EmulatorRequest {
  /** The peer's address, as the socket gives it. */
  readonly remoteAddress: string | undefined;
  readonly method: string;
  readonly host: string | undefined;
  readonly origin: string | undefined;
  readonly authorization: string | undefined;
}

/** The bodies of the 403 answers (LoopbackDynamoDBLocal.java holds the same words). */
export const EMULATOR_REFUSALS = {
  notLoopbackPeer: 'refused: not from the loopback address',
  notLoopbackHost: 'refused: the Host header is not 127.0.0.1, localhost or [::1]',
  fromBrowser: 'refused: a browser request (Origin header or CORS preflight); only AWS SDK and CLI calls are answered',
  unsigned: 'refused: not signed with AWS Signature Version 4 (Authorization: AWS4-HMAC-SHA256 Credential=...)',
} as const;

export type EmulatorRefusal = (typeof EMULATOR_REFUSALS)[keyof typeof EMULATOR_REFUSALS];

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (a dual-stack socket's form). */
const LOOPBACK_PEER = /^(?:127\.|::ffff:127\.|::1$)/;
/** The loopback names, with any port: what the SDK sends for the endpoints the local service writes. */
const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;
/** The header the SDK and the CLI send: AWS4-HMAC-SHA256 Credential=key/date/region/service/aws4_request, SignedHeaders=..., Signature=hex. */
const SIGV4_AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=[^/\s,]+\/\d{8}\/[^/\s,]+\/[^/\s,]+\/aws4_request, ?SignedHeaders=[a-z0-9-]+(?:;[a-z0-9-]+)*, ?Signature=[0-9a-f]{64}$/;

/** Why the request is refused, or undefined when it may reach the emulator. */
export function emulatorRefusal(request: EmulatorRequest): EmulatorRefusal | undefined {
  if (request.remoteAddress === undefined || !LOOPBACK_PEER.test(request.remoteAddress)) return EMULATOR_REFUSALS.notLoopbackPeer;
  if (request.host === undefined || !LOOPBACK_HOST.test(request.host)) return EMULATOR_REFUSALS.notLoopbackHost;
  if (request.origin !== undefined || request.method === 'OPTIONS') return EMULATOR_REFUSALS.fromBrowser;
  if (request.authorization === undefined || !SIGV4_AUTHORIZATION.test(request.authorization)) return EMULATOR_REFUSALS.unsigned;
  return undefined;
}
