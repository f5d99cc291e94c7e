/**
 * Daraja's Account Balance API: the simulator against the published request and result (sent as any client
 * sends them), its balances derived from what it paid and collected, and the adapter's query and exact
 * reading of the result, over real HTTP both ways. Rows of docs/rails/mpesa-daraja.md's table.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDarajaBalanceResult } from '../src/modules/railPartners/partners/mpesaDaraja/accountBalance.ts';
import { DARAJA_CALLBACK_PATHS } from '../src/modules/railPartners/partners/mpesaDaraja/protocol.ts';
import {
  type MpesaDarajaRail,
  mpesaDarajaRail,
} from '../src/modules/railPartners/partners/mpesaDaraja/rail.ts';
import { guardedFetch } from '../src/outbound/guard.ts';
import { MalformedCallbackError } from '../src/rails/partner.ts';
import {
  ACCOUNT_BALANCE_PATH,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { mobileMoneyPayout } from './support/payouts.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

/** How long a test waits for a callback, and how often it looks. */
const CALLBACK_WAIT_MS = 3_000;
const POLL_MS = 10;
const CREDENTIALS = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
const FLOAT_MINOR = BigInt(DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS) * 100n;
/** Safaricom's published sample result's AccountBalance value. */
const PUBLISHED_SAMPLE =
  'Working Account|KES|46713.00|46713.00|0.00|0.00&Float Account|KES|0.00|0.00|0.00|0.00&Utility Account|KES|49217.00|49217.00|0.00|0.00&Charges Paid Account|KES|-220.00|-220.00|0.00|0.00&Organization Settlement Account|KES|0.00|0.00|0.00|0.00';

let simulator: DarajaSimulator;
let receiver: Receiver;
let rail: MpesaDarajaRail;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  simulator = await startDarajaSimulator({ port: 0 });
  receiver = await startReceiver();
  rail = mpesaDarajaRail(
    { fetch: guardedFetch('allow_loopback'), baseUrl: simulator.url, ...CREDENTIALS },
    { baseUrl: `${receiver.url}/callbacks/token` },
  );
});

afterAll(async () => {
  await simulator.close();
  await receiver.close();
});

async function token(): Promise<string> {
  const basic = Buffer.from(`${CREDENTIALS.consumerKey}:${CREDENTIALS.consumerSecret}`).toString('base64');
  const response = await fetch(`${simulator.url}/oauth/v1/generate?grant_type=client_credentials`, {
    headers: { authorization: `Basic ${basic}` },
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

async function query(body: Record<string, unknown>) {
  const response = await fetch(`${simulator.url}${ACCOUNT_BALANCE_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The published request, with the simulator's credentials. */
function balanceRequest(overrides: Record<string, unknown> = {}) {
  return {
    Initiator: CREDENTIALS.initiatorName,
    SecurityCredential: CREDENTIALS.securityCredential,
    CommandID: 'AccountBalance',
    PartyA: CREDENTIALS.shortCode,
    IdentifierType: '4',
    Remarks: 'ok',
    QueueTimeOutURL: `${receiver.url}/balance/timeout`,
    ResultURL: `${receiver.url}/balance/result`,
    ...overrides,
  };
}

/** The first callback received that mentions `id`, parsed. */
async function callbackMentioning(id: string): Promise<{ body: Record<string, unknown>; raw: string }> {
  const deadline = Date.now() + CALLBACK_WAIT_MS;
  for (;;) {
    const found = receiver.received.find((r) => r.body.includes(id));
    if (found) return { body: JSON.parse(found.body) as Record<string, unknown>, raw: found.body };
    if (Date.now() > deadline) throw new Error(`no callback mentioning ${id}`);
    await sleep(POLL_MS);
  }
}

/** The Utility Account of a balance result, current amount in minor units. */
function utilityMinor(body: Record<string, unknown>): bigint {
  const parsed = parseDarajaBalanceResult(body);
  if (parsed.kind !== 'balances') throw new Error(`balance result failed: ${parsed.resultCode}`);
  const utility = parsed.accounts.find((a) => a.account === 'Utility Account');
  if (!utility) throw new Error('no Utility Account');
  return utility.currentMinor;
}

describe('Account Balance in the simulator (published request and result)', () => {
  it('accepts the published request and POSTs the result in the sample’s shape', async () => {
    const accepted = await query(balanceRequest());
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ ResponseCode: '0', ResponseDescription: expect.any(String) });
    const originator = String(accepted.body.OriginatorConversationID);
    const { body } = await callbackMentioning(originator);
    const result = body.Result as Record<string, unknown>;
    expect(result).toMatchObject({
      ResultType: 0,
      ResultCode: 0,
      OriginatorConversationID: originator,
      ConversationID: accepted.body.ConversationID,
      TransactionID: expect.stringMatching(/^[A-Z0-9]{3}0000000$/),
      ReferenceData: { ReferenceItem: { Key: 'QueueTimeoutURL' } },
    });
    const [balance, completed] = (
      result.ResultParameters as { ResultParameter: { Key: string; Value: unknown }[] }
    ).ResultParameter;
    expect(balance?.Key).toBe('AccountBalance');
    expect(
      String(balance?.Value)
        .split('&')
        .map((a) => a.split('|')[0]),
    ).toEqual([
      'Working Account',
      'Float Account',
      'Utility Account',
      'Charges Paid Account',
      'Organization Settlement Account',
    ]);
    expect(String(balance?.Value)).toMatch(/^(?:[A-Za-z ]+\|KES(?:\|-?\d+\.\d{2}){4}&?)+$/);
    expect(completed).toMatchObject({ Key: 'BOCompletedTime', Value: expect.any(Number) });
  });

  it('refuses each missing or malformed field with the published 400.002.02', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['Initiator', { Initiator: '' }],
      ['SecurityCredential', { SecurityCredential: undefined }],
      ['CommandID', { CommandID: 'TransactionStatusQuery' }],
      ['PartyA', { PartyA: 'abc' }],
      ['IdentifierType', { IdentifierType: '3' }],
      ['Remarks', { Remarks: '' }],
      ['Remarks', { Remarks: 'x'.repeat(101) }],
      ['QueueTimeOutURL', { QueueTimeOutURL: undefined }],
      ['ResultURL', { ResultURL: 'not a url' }],
    ];
    for (const [field, override] of cases) {
      const refused = await query(balanceRequest(override));
      expect(refused.status, field).toBe(400);
      expect(refused.body).toMatchObject({
        errorCode: '400.002.02',
        errorMessage: `Bad Request - Invalid ${field}`,
      });
    }
  });

  it('takes PartyA and IdentifierType as numbers, as the samples send them', async () => {
    const accepted = await query(
      balanceRequest({ PartyA: Number(CREDENTIALS.shortCode), IdentifierType: 4 }),
    );
    expect(accepted.status).toBe(200);
  });

  it('answers a wrong initiator credential with ResultCode 2001 and no balances', async () => {
    const accepted = await query(balanceRequest({ SecurityCredential: 'not-encrypted' }));
    const { body } = await callbackMentioning(String(accepted.body.OriginatorConversationID));
    const result = body.Result as Record<string, unknown>;
    expect(result).toMatchObject({ ResultCode: 2001, ResultDesc: 'The initiator information is invalid.' });
    expect(result.ResultParameters).toBeUndefined();
    expect(parseDarajaBalanceResult(body)).toMatchObject({ kind: 'failed', resultCode: '2001' });
  });
});

describe('Account Balance through the adapter', () => {
  it('reports each shortcode’s float less what it paid out, plus what it collected, in exact minor units', async () => {
    const paid = await rail.submit(
      { idempotencyReference: 'tr_balance_paid', transfer: mobileMoneyPayout('+254700000000', 'mpesa') },
      new Date(),
    );
    expect(paid.accepted).toBe(true);
    // Declined for insufficient funds: nothing moves.
    await rail.submit(
      {
        idempotencyReference: 'tr_balance_declined',
        transfer: mobileMoneyPayout('+254700000002', 'mpesa', { amountMinor: 99_00n }),
      },
      new Date(),
    );
    const pushed = await rail.collect(
      {
        idempotencyReference: 'col_balance',
        amountMinor: 250_00n,
        currency: 'KES',
        payerPhone: '+254700000000',
        reference: 'INV-1',
        description: 'Invoice 1',
      },
      new Date(),
    );
    expect(pushed.accepted).toBe(true);

    const asked = await rail.queryAccountBalance();
    const arrived = await callbackMentioning(asked.originatorConversationId);
    expect(receiver.received.some((r) => r.body === arrived.raw)).toBe(true);
    expect(utilityMinor(arrived.body)).toBe(FLOAT_MINOR - 1_500_00n);
    const report = rail.parseCallback({
      path: DARAJA_CALLBACK_PATHS.balanceResult,
      headers: {},
      rawBody: arrived.raw,
    });
    // Read into the rail interface's balances report, naming the query by its OriginatorConversationID.
    expect(report).toMatchObject({
      kind: 'balances',
      reference: asked.originatorConversationId,
      outcome: {
        kind: 'reported',
        accounts: expect.arrayContaining([
          {
            account: 'Utility Account',
            currency: 'KES',
            availableMinor: FLOAT_MINOR - 1_500_00n,
            currentMinor: FLOAT_MINOR - 1_500_00n,
          },
        ]),
      },
    });

    const paybill = await query(balanceRequest({ PartyA: CREDENTIALS.stkShortCode }));
    const collected = await callbackMentioning(String(paybill.body.OriginatorConversationID));
    expect(utilityMinor(collected.body)).toBe(FLOAT_MINOR + 250_00n);
  });

  it('sends the published request fields, with its callback paths', async () => {
    const before = simulator.requests.length;
    await rail.queryAccountBalance();
    const sent = simulator.requests.slice(before).find((r) => r.path === ACCOUNT_BALANCE_PATH);
    expect(Object.keys(sent?.body as object).sort()).toEqual(
      [
        'Initiator',
        'SecurityCredential',
        'CommandID',
        'PartyA',
        'IdentifierType',
        'Remarks',
        'QueueTimeOutURL',
        'ResultURL',
      ].sort(),
    );
    expect(sent?.body).toMatchObject({
      CommandID: 'AccountBalance',
      PartyA: CREDENTIALS.shortCode,
      IdentifierType: '4',
      ResultURL: expect.stringMatching(/\/balance\/result$/),
      QueueTimeOutURL: expect.stringMatching(/\/balance\/timeout$/),
    });
  });

  it('throws, rather than answering, when Daraja refuses or fails the query', async () => {
    simulator.failNext(1, 503);
    await expect(rail.queryAccountBalance()).rejects.toThrow(/HTTP 503/);
  });
});

describe('reading the balance result', () => {
  const result = (value: unknown, code: unknown = 0) => ({
    Result: {
      ResultType: 0,
      ResultCode: code,
      ResultDesc: 'The service request is processed successfully.',
      OriginatorConversationID: '19464-802673-1',
      ConversationID: 'AG_20170728_0000589b6252f7f25488',
      TransactionID: 'LGS0000000',
      ResultParameters: {
        ResultParameter: [
          { Key: 'AccountBalance', Value: value },
          { Key: 'BOCompletedTime', Value: 20170728095642 },
        ],
      },
    },
  });

  it('reads the published sample exactly, negative amounts included', () => {
    const parsed = parseDarajaBalanceResult(result(PUBLISHED_SAMPLE));
    expect(parsed).toMatchObject({ kind: 'balances', completedTime: '20170728095642' });
    if (parsed.kind !== 'balances') throw new Error('unreachable');
    expect(parsed.accounts.map((a) => [a.account, a.currency, a.currentMinor, a.availableMinor])).toEqual([
      ['Working Account', 'KES', 4_671_300n, 4_671_300n],
      ['Float Account', 'KES', 0n, 0n],
      ['Utility Account', 'KES', 4_921_700n, 4_921_700n],
      ['Charges Paid Account', 'KES', -22_000n, -22_000n],
      ['Organization Settlement Account', 'KES', 0n, 0n],
    ]);
  });

  it('keeps each of the four amounts apart, and amounts past a float’s precision exact', () => {
    const parsed = parseDarajaBalanceResult(
      result('Working Account|KES|90071992547409.93|6186.8|340382.00|0'),
    );
    if (parsed.kind !== 'balances') throw new Error('unreachable');
    expect(parsed.accounts[0]).toEqual({
      account: 'Working Account',
      currency: 'KES',
      currentMinor: 9_007_199_254_740_993n,
      availableMinor: 618_680n,
      reservedMinor: 34_038_200n,
      unclearedMinor: 0n,
    });
  });

  it('refuses a result it cannot read exactly as malformed', () => {
    for (const value of [
      'Working Account|KES|1.005|0.00|0.00|0.00',
      'Working Account|KES|1e3|0.00|0.00|0.00',
      'Working Account|KES|10.00|10.00|0.00',
      'Working Account|KES|10.00|10.00|0.00|0.00|0.00',
      '',
      12,
    ]) {
      expect(() => parseDarajaBalanceResult(result(value)), String(value)).toThrow(MalformedCallbackError);
    }
    expect(() =>
      rail.parseCallback({
        path: DARAJA_CALLBACK_PATHS.balanceResult,
        headers: {},
        rawBody: '{"Result":{}}',
      }),
    ).toThrow(MalformedCallbackError);
  });

  it('reads a queue time-out notice as deciding nothing', () => {
    const notice = { Result: { ResultType: 1, ResultCode: 1, OriginatorConversationID: '1-2-1' } };
    expect(
      rail.parseCallback({
        path: DARAJA_CALLBACK_PATHS.balanceQueueTimeout,
        headers: {},
        rawBody: JSON.stringify(notice),
      }),
    ).toEqual({ kind: 'ignored', reason: 'balance_queue_timeout' });
  });
});
