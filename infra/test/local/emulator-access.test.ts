import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListTopicsCommand, SNSClient } from '@aws-sdk/client-sns';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { EMULATOR_REFUSALS, emulatorRefusal, type EmulatorRequest } from '../../src/local/emulator-access.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { sharedEmulators } from './kit.js';

/**
 * Only a program's signed requests from this machine reach the emulators (emulator-access.ts):
 * the same requests, sent to both, get the same answers. What a page in a browser can do with
 * them is in emulator-access-browser.test.ts.
 */

const emulators = sharedEmulators();

/** Well formed, not valid: neither emulator checks the signature (emulator-access.ts says why). */
const WELL_FORMED_AUTHORIZATION = `AWS4-HMAC-SHA256 Credential=local/20261127/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`;

interface Answer {
  readonly status: number | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** node:http rather than fetch: fetch sends no Host header of the caller's choosing. */
function send(endpoint: string, method: string, headers: OutgoingHttpHeaders, body = ''): Promise<Answer> {
  return new Promise((answered, failed) => {
    const sent = httpRequest(`${endpoint}/`, { method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => answered({ status: response.statusCode, headers: response.headers, body: text }));
    });
    sent.on('error', failed).end(body);
  });
}

/** A call each emulator answers with its listing when it is let through. */
const EMULATORS = [
  { name: 'fauxqs (SNS and SQS)', endpoint: () => emulators.messagingEndpoint, target: 'AmazonSQS.ListQueues' },
  { name: 'DynamoDB Local', endpoint: () => emulators.dynamodbEndpoint, target: 'DynamoDB_20120810.ListTables' },
] as const;

const listing = (target: string): OutgoingHttpHeaders => ({ 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target });
const portOf = (endpoint: string): string => new URL(endpoint).port;

describe.each(EMULATORS)('$name', ({ endpoint, target }) => {
  it('refuses an unsigned request, however well formed its call', async () => {
    const answer = await send(endpoint(), 'POST', listing(target), '{}');
    expect(answer.status).toBe(403);
    expect(answer.body).toBe(EMULATOR_REFUSALS.unsigned);
  });

  it('refuses a signed request whose Host is not a loopback name, as a rebound DNS name sends', async () => {
    const answer = await send(
      endpoint(),
      'POST',
      { ...listing(target), authorization: WELL_FORMED_AUTHORIZATION, host: `rebound.example:${portOf(endpoint())}` },
      '{}',
    );
    expect(answer.status).toBe(403);
    expect(answer.body).toBe(EMULATOR_REFUSALS.notLoopbackHost);
  });

  it('refuses a CORS preflight and a signed request with an Origin, and never sends an Access-Control header', async () => {
    const preflight = await send(endpoint(), 'OPTIONS', {
      origin: 'http://localhost:1234',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,x-amz-target',
    });
    const withOrigin = await send(
      endpoint(),
      'POST',
      { ...listing(target), authorization: WELL_FORMED_AUTHORIZATION, origin: 'http://localhost:1234' },
      '{}',
    );
    for (const answer of [preflight, withOrigin]) {
      expect(answer.status).toBe(403);
      expect(answer.body).toBe(EMULATOR_REFUSALS.fromBrowser);
      expect(Object.keys(answer.headers).filter((header) => header.startsWith('access-control-'))).toEqual([]);
    }
  });

  it.each(['127.0.0.1', 'localhost', '[::1]', 'LOCALHOST'])('answers a signed request with the Host %s, with any port', async (name) => {
    const answer = await send(
      endpoint(),
      'POST',
      { ...listing(target), authorization: WELL_FORMED_AUTHORIZATION, host: `${name}:1` },
      '{}',
    );
    expect(answer.status).toBe(200);
  });
});

describe('the AWS SDK', () => {
  it('is answered: it signs every call', async () => {
    const access = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const sns = new SNSClient({ ...access, endpoint: emulators.messagingEndpoint });
    const sqs = new SQSClient({ ...access, endpoint: emulators.messagingEndpoint });
    const dynamodb = new DynamoDBClient({ ...access, endpoint: emulators.dynamodbEndpoint });
    try {
      expect((await sns.send(new ListTopicsCommand({}))).$metadata.httpStatusCode).toBe(200);
      expect((await sqs.send(new ListQueuesCommand({}))).$metadata.httpStatusCode).toBe(200);
      expect((await dynamodb.send(new ListTablesCommand({}))).$metadata.httpStatusCode).toBe(200);
    } finally {
      for (const client of [sns, sqs, dynamodb]) client.destroy();
    }
  });
});

describe('emulatorRefusal', () => {
  const signed: EmulatorRequest = {
    remoteAddress: '127.0.0.1',
    method: 'POST',
    host: '127.0.0.1:4566',
    origin: undefined,
    authorization: WELL_FORMED_AUTHORIZATION,
  };

  it('lets through a signed request from the loopback address, IPv4, IPv6 or mapped', () => {
    for (const remoteAddress of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) {
      expect(emulatorRefusal({ ...signed, remoteAddress })).toBeUndefined();
    }
  });

  it('refuses a peer outside the loopback address (should the emulators ever bind another)', () => {
    for (const remoteAddress of ['10.0.0.5', '::ffff:10.0.0.5', '::2', '1127.0.0.1', undefined]) {
      expect(emulatorRefusal({ ...signed, remoteAddress })).toBe(EMULATOR_REFUSALS.notLoopbackPeer);
    }
  });

  it('refuses a Host that only looks like a loopback name, or none', () => {
    for (const host of ['localhost.', 'localhost.example', '127.0.0.1.nip.io', '127.0.0.2', 'x.localhost', '[::1', undefined]) {
      expect(emulatorRefusal({ ...signed, host })).toBe(EMULATOR_REFUSALS.notLoopbackHost);
    }
  });

  it('refuses any Origin, the literal null included, and any OPTIONS', () => {
    expect(emulatorRefusal({ ...signed, origin: 'null' })).toBe(EMULATOR_REFUSALS.fromBrowser);
    expect(emulatorRefusal({ ...signed, origin: 'http://127.0.0.1:4566' })).toBe(EMULATOR_REFUSALS.fromBrowser);
    expect(emulatorRefusal({ ...signed, method: 'OPTIONS' })).toBe(EMULATOR_REFUSALS.fromBrowser);
  });

  it('refuses an Authorization header that is not a Signature Version 4 one', () => {
    const refused = [
      undefined,
      '',
      'Basic bG9jYWw6bG9jYWw=',
      'AWS4-HMAC-SHA256 Credential=local',
      WELL_FORMED_AUTHORIZATION.replace(/Signature=\w+/, 'Signature=zz'),
      `${WELL_FORMED_AUTHORIZATION} `,
    ];
    for (const authorization of refused) expect(emulatorRefusal({ ...signed, authorization })).toBe(EMULATOR_REFUSALS.unsigned);
  });
});
