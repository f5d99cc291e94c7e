/**
 * The Daraja simulator against Safaricom's published request shapes, sent as any client would send them
 * (plain fetch, no adapter): each case is a row of the table in docs/rails/mpesa-daraja.md.
 */

import { constants, publicEncrypt, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DARAJA_SIMULATOR_CERTIFICATE_PATH,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  DARAJA_STK_PROMPT_TIMEOUT_MS,
  DARAJA_TOKEN_LIFETIME_SECONDS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

/** How long a test waits for a callback, and how often it looks. */
const CALLBACK_WAIT_MS = 3_000;
const POLL_MS = 10;

const STK_PUSH_PATH = '/mpesa/stkpush/v1/processrequest';
const STATUS_PATH = '/mpesa/transactionstatus/v1/query';
const B2C_PATH = '/mpesa/b2c/v3/paymentrequest';

let simulator: DarajaSimulator;
let receiver: Receiver;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function token(target = simulator): Promise<string> {
  const { consumerKey, consumerSecret } = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
  const basic = Buffer.from(`${consumerKey}:${consumerSecret}`).toString('base64');
  const response = await fetch(`${target.url}/oauth/v1/generate?grant_type=client_credentials`, {
    headers: { authorization: `Basic ${basic}` },
  });
  const body = (await response.json()) as { access_token: string };
  return body.access_token;
}

async function post(
  path: string,
  body: unknown,
  bearer?: string,
  target = simulator,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer ?? (await token(target))}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The first callback body received after `before` that mentions `id`. */
async function callbackMentioning(id: string, before = 0): Promise<Record<string, unknown>> {
  const deadline = Date.now() + CALLBACK_WAIT_MS;
  for (;;) {
    const found = receiver.received.slice(before).find((r) => r.body.includes(id));
    if (found) return JSON.parse(found.body) as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`no callback mentioning ${id}`);
    await sleep(POLL_MS);
  }
}

/** A B2C request in the published shape. */
function b2cRequest(originator: string, overrides: Record<string, unknown> = {}) {
  return {
    OriginatorConversationID: originator,
    InitiatorName: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
    SecurityCredential: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.securityCredential,
    CommandID: 'BusinessPayment',
    Amount: '10',
    PartyA: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode,
    PartyB: '254708374149',
    Remarks: 'Test remarks',
    QueueTimeOutURL: `${receiver.url}/b2c/timeout`,
    ResultURL: `${receiver.url}/b2c/result`,
    Occassion: 'Test',
    ...overrides,
  };
}

/** A Transaction Status request in the published shape (by OriginalConversationID). */
function statusRequest(overrides: Record<string, unknown> = {}) {
  return {
    Initiator: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
    SecurityCredential: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.securityCredential,
    CommandID: 'TransactionStatusQuery',
    TransactionID: '',
    OriginalConversationID: '',
    PartyA: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode,
    IdentifierType: '4',
    ResultURL: `${receiver.url}/status/result`,
    QueueTimeOutURL: `${receiver.url}/status/timeout`,
    Remarks: 'OK',
    Occasion: 'OK',
    ...overrides,
  };
}

/** An M-Pesa Express request in the published shape, signed with the simulator's passkey. */
function stkRequest(phone: string, overrides: Record<string, unknown> = {}) {
  const { stkShortCode, passkey } = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
  const timestamp = '20260101120000';
  return {
    BusinessShortCode: stkShortCode,
    Password: Buffer.from(`${stkShortCode}${passkey}${timestamp}`).toString('base64'),
    Timestamp: timestamp,
    TransactionType: 'CustomerPayBillOnline',
    Amount: '1',
    PartyA: phone,
    PartyB: stkShortCode,
    PhoneNumber: phone,
    CallBackURL: `${receiver.url}/stk`,
    AccountReference: 'Test',
    TransactionDesc: 'Test',
    ...overrides,
  };
}

beforeAll(async () => {
  simulator = await startDarajaSimulator();
  receiver = await startReceiver('/callbacks');
});

afterAll(async () => {
  await simulator?.close();
  await receiver?.close();
});

describe('Transaction Status (published request)', () => {
  it('finds a payment by OriginalConversationID and by TransactionID', async () => {
    const originator = `oc-${Date.now()}`;
    expect((await post(B2C_PATH, b2cRequest(originator))).status).toBe(200);
    await callbackMentioning(originator);
    const receipt = simulator.payments.find((p) => p.originatorConversationId === originator)?.receipt ?? '';

    for (const named of [{ OriginalConversationID: originator }, { TransactionID: receipt }]) {
      const before = receiver.received.length;
      const answer = await post(STATUS_PATH, statusRequest(named));
      expect(answer, JSON.stringify(named)).toMatchObject({ status: 200, body: { ResponseCode: '0' } });
      const result = (await callbackMentioning(originator, before)).Result as Record<string, unknown>;
      expect(result.ResultCode).toBe(0);
      expect(JSON.stringify(result.ResultParameters)).toContain(receipt);
    }
  });

  it('ignores the unpublished OriginatorConversationID: a query naming nothing else is refused', async () => {
    const answer = await post(
      STATUS_PATH,
      statusRequest({
        TransactionID: undefined,
        OriginalConversationID: undefined,
        OriginatorConversationID: 'x',
      }),
    );
    expect(answer).toMatchObject({
      status: 400,
      body: { errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid TransactionID' },
    });
  });
});

describe('M-Pesa Express (published request)', () => {
  it('accepts a push without the optional TransactionDesc, and refuses one past 13 characters', async () => {
    const without = await post(STK_PUSH_PATH, stkRequest('254711000101', { TransactionDesc: undefined }));
    expect(without).toMatchObject({ status: 200, body: { ResponseCode: '0' } });
    const tooLong = await post(
      STK_PUSH_PATH,
      stkRequest('254711000102', { TransactionDesc: 'x'.repeat(14) }),
    );
    expect(tooLong).toMatchObject({
      status: 400,
      body: { errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid TransactionDesc' },
    });
  });
});

describe('SecurityCredential (the initiator password under the published certificate)', () => {
  /** What a client does with the certificate it downloaded: RSA, PKCS #1 v1.5, base64. */
  const encrypt = (password: string, certificatePem: string) =>
    publicEncrypt(
      { key: new X509Certificate(certificatePem).publicKey, padding: constants.RSA_PKCS1_PADDING },
      Buffer.from(password),
    ).toString('base64');

  async function b2cResultCode(credential: string): Promise<unknown> {
    const originator = `sc-${Date.now()}-${Math.random()}`;
    const answer = await post(B2C_PATH, b2cRequest(originator, { SecurityCredential: credential }));
    expect(answer.status).toBe(200);
    return ((await callbackMentioning(originator)).Result as Record<string, unknown>).ResultCode;
  }

  it('publishes its certificate, and pays a request whose credential was encrypted with it', async () => {
    const response = await fetch(`${simulator.url}${DARAJA_SIMULATOR_CERTIFICATE_PATH}`);
    expect(response.status).toBe(200);
    const pem = await response.text();
    expect(new X509Certificate(pem).publicKey.asymmetricKeyType).toBe('rsa');
    expect(await b2cResultCode(encrypt(DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorPassword, pem))).toBe(0);
  });

  it('fails a wrong password, or a credential that is not encrypted, with ResultCode 2001', async () => {
    const pem = await (await fetch(`${simulator.url}${DARAJA_SIMULATOR_CERTIFICATE_PATH}`)).text();
    for (const credential of [encrypt('not-the-password', pem), 'plain-text-password', 'c2hvcnQ=']) {
      const originator = `sc-${Date.now()}-${Math.random()}`;
      await post(B2C_PATH, b2cRequest(originator, { SecurityCredential: credential }));
      const result = (await callbackMentioning(originator)).Result as Record<string, unknown>;
      expect(result, credential).toMatchObject({
        ResultCode: 2001,
        ResultDesc: 'The initiator information is invalid.',
      });
    }
  });

  it('answers a status query with a wrong credential with ResultCode 2001', async () => {
    const before = receiver.received.length;
    const occasion = `occ-${Date.now()}`;
    await post(
      STATUS_PATH,
      statusRequest({ TransactionID: 'NLJ41HAY6Q', SecurityCredential: 'wrong', Occasion: occasion }),
    );
    const result = (await callbackMentioning(occasion, before)).Result as Record<string, unknown>;
    expect(result.ResultCode).toBe(2001);
  });
});

describe('Authorization (tokens)', () => {
  it('invalidates the previous token when a new one is issued', async () => {
    const first = await token();
    const second = await token();
    const refused = await post(B2C_PATH, b2cRequest(`tok-${Date.now()}-1`), first);
    expect(refused).toMatchObject({ status: 401, body: { errorCode: '401.002.01' } });
    expect((await post(B2C_PATH, b2cRequest(`tok-${Date.now()}-2`), second)).status).toBe(200);
  });

  it('refuses a bad token with each family’s published code and status', async () => {
    expect(await post(STATUS_PATH, statusRequest({ TransactionID: 'NLJ41HAY6Q' }), 'nope')).toMatchObject({
      status: 401,
      body: { errorCode: '401.002.01' },
    });
    expect(await post(STK_PUSH_PATH, stkRequest('254711000103'), 'nope')).toMatchObject({
      status: 404,
      body: { errorCode: '404.001.03', errorMessage: 'Invalid Access Token' },
    });
  });

  it('expires a token after expires_in seconds by the simulator’s clock', async () => {
    let now = Date.parse('2026-12-06T10:00:00Z');
    const clocked = await startDarajaSimulator({ now: () => new Date(now) });
    try {
      const bearer = await token(clocked);
      const body = { CheckoutRequestID: 'ws_CO_none' };
      expect((await post('/mpesa/stkpushquery/v1/query', body, bearer, clocked)).status).toBe(400);
      now += DARAJA_TOKEN_LIFETIME_SECONDS * 1000;
      expect(await post('/mpesa/stkpushquery/v1/query', body, bearer, clocked)).toMatchObject({
        status: 404,
        body: { errorCode: '404.001.03' },
      });
    } finally {
      await clocked.close();
    }
  });
});

describe('M-Pesa Express prompts end at the time-out', () => {
  const QUERY_PATH = '/mpesa/stkpushquery/v1/query';

  async function query(target: DarajaSimulator, checkoutRequestId: unknown) {
    const { stkShortCode, passkey } = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
    const timestamp = '20260101120000';
    const Password = Buffer.from(`${stkShortCode}${passkey}${timestamp}`).toString('base64');
    const body = {
      BusinessShortCode: stkShortCode,
      Password,
      Timestamp: timestamp,
      CheckoutRequestID: checkoutRequestId,
    };
    return post(QUERY_PATH, body, undefined, target);
  }

  it('locks the phone while a prompt is open, then ends it with 1037 (or 1019) and releases the lock', async () => {
    let now = Date.parse('2026-12-06T10:00:00Z');
    const clocked = await startDarajaSimulator({ now: () => new Date(now) });
    try {
      const unanswered = await post(STK_PUSH_PATH, stkRequest('254700000003'), undefined, clocked);
      const expiring = await post(STK_PUSH_PATH, stkRequest('254700000022'), undefined, clocked);
      expect(await query(clocked, unanswered.body.CheckoutRequestID)).toMatchObject({
        status: 500,
        body: { errorCode: '500.001.1001', errorMessage: 'The transaction is being processed' },
      });
      expect(await post(STK_PUSH_PATH, stkRequest('254700000003'), undefined, clocked)).toMatchObject({
        status: 500,
        body: {
          errorCode: '500.001.1001',
          errorMessage: expect.stringMatching(/^Unable to lock subscriber/),
        },
      });

      now += DARAJA_STK_PROMPT_TIMEOUT_MS;
      expect(await query(clocked, unanswered.body.CheckoutRequestID)).toMatchObject({
        status: 200,
        body: { ResultCode: '1037', ResultDesc: 'DS timeout user cannot be reached' },
      });
      expect(await query(clocked, expiring.body.CheckoutRequestID)).toMatchObject({
        status: 200,
        body: { ResultCode: '1019', ResultDesc: 'Transaction has expired.' },
      });
      const again = await post(STK_PUSH_PATH, stkRequest('254700000003'), undefined, clocked);
      expect(again).toMatchObject({ status: 200, body: { ResponseCode: '0' } });
    } finally {
      await clocked.close();
    }
  });

  it('keeps a phone’s lock to the simulator instance that holds it', async () => {
    const first = await startDarajaSimulator();
    const second = await startDarajaSimulator();
    try {
      expect((await post(STK_PUSH_PATH, stkRequest('254700000003'), undefined, first)).status).toBe(200);
      expect((await post(STK_PUSH_PATH, stkRequest('254700000003'), undefined, first)).status).toBe(500);
      expect((await post(STK_PUSH_PATH, stkRequest('254700000003'), undefined, second)).status).toBe(200);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('field rules and value formats (published samples)', () => {
  it('holds B2C Remarks to 2–100 characters with the published error', async () => {
    for (const [remarks, status] of [
      ['x', 400],
      ['ok', 200],
      ['x'.repeat(100), 200],
      ['x'.repeat(101), 400],
    ] as const) {
      const answer = await post(
        B2C_PATH,
        b2cRequest(`rm-${Date.now()}-${remarks.length}`, { Remarks: remarks }),
      );
      expect(answer.status, `${remarks.length} characters`).toBe(status);
      if (status === 400) {
        expect(answer.body).toMatchObject({
          errorCode: '400.002.02',
          errorMessage: 'Bad Request - Invalid Remarks',
        });
      }
    }
  });

  it('answers with the samples’ value types: expires_in, ResponseCode and the STK query ResultCode as strings', async () => {
    const { consumerKey, consumerSecret } = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
    const basic = Buffer.from(`${consumerKey}:${consumerSecret}`).toString('base64');
    const oauth = await fetch(`${simulator.url}/oauth/v1/generate?grant_type=client_credentials`, {
      headers: { authorization: `Basic ${basic}` },
    });
    expect(await oauth.json()).toMatchObject({ access_token: expect.any(String), expires_in: '3599' });

    const originator = `fmt-${Date.now()}`;
    const accepted = await post(B2C_PATH, b2cRequest(originator, { Amount: 10 }));
    expect(accepted.body).toMatchObject({ ResponseCode: '0', OriginatorConversationID: originator });
    const result = (await callbackMentioning(originator)).Result as {
      ResultParameters: { ResultParameter: Array<{ Key: string; Value: unknown }> };
    };
    const completed = result.ResultParameters.ResultParameter.find(
      (p) => p.Key === 'TransactionCompletedDateTime',
    );
    expect(completed?.Value).toMatch(/^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}:\d{2}$/);
    expect(result.ResultParameters.ResultParameter.find((p) => p.Key === 'TransactionAmount')?.Value).toBe(
      10,
    );
  });

  it('takes the samples’ numeric fields as numbers (Transaction Status PartyA and IdentifierType)', async () => {
    const answer = await post(
      STATUS_PATH,
      statusRequest({
        TransactionID: 'NLJ41HAY6Q',
        PartyA: Number(DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode),
        IdentifierType: 4,
      }),
    );
    expect(answer).toMatchObject({ status: 200, body: { ResponseCode: '0' } });
  });
});
