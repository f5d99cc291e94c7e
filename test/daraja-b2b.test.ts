/**
 * Daraja's B2B payment request in the simulator, over raw HTTP as any client sends it: every field rule,
 * the acknowledgement, the result POSTed to ResultURL (success, insufficient funds, a wrong credential),
 * the Utility Accounts that Account Balance reports moving, and a repeated request. Rows of
 * docs/rails/mpesa-daraja.md's tables.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  B2B_PATH,
  DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS,
  type DarajaSimulator,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS as SIM,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import {
  type DarajaRawClient,
  darajaRawClient,
  expectAcknowledged,
  resultParameters,
} from './support/darajaRaw.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

/** The starting float in cents. */
const FLOAT_CENTS = BigInt(DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS) * 100n;

let simulator: DarajaSimulator;
let receiver: Receiver;
let raw: DarajaRawClient;
const post = (path: string, body: Record<string, unknown>, token?: string) => raw.post(path, body, token);
const callbackMentioning = (id: string) => raw.callbackMentioning(id);
const utilityOf = (shortCode: string) => raw.utilityOf(shortCode);
const parameters = resultParameters;

beforeAll(async () => {
  [simulator, receiver] = await Promise.all([startDarajaSimulator({ port: 0 }), startReceiver()]);
  raw = await darajaRawClient(simulator, receiver);
});

afterAll(async () => {
  await Promise.all([simulator.close(), receiver.close()]);
});

/** The published paybill request, with the simulator's credentials. */
function payBill(overrides: Record<string, unknown> = {}) {
  return {
    Initiator: SIM.initiatorName,
    SecurityCredential: SIM.securityCredential,
    CommandID: 'BusinessPayBill',
    SenderIdentifierType: '4',
    RecieverIdentifierType: '4',
    Amount: '190',
    PartyA: '600001',
    PartyB: '600002',
    AccountReference: '353353',
    Requester: '254700000000',
    Remarks: 'ok',
    QueueTimeOutURL: `${receiver.url}/b2b/timeout`,
    ResultURL: `${receiver.url}/b2b/result`,
    ...overrides,
  };
}

/** A paybill request with these overrides, acknowledged, and the result its ResultURL received. */
async function paid(overrides: Record<string, unknown>) {
  const accepted = await post(B2B_PATH, payBill(overrides));
  expect(accepted.status).toBe(200);
  return { accepted, result: await callbackMentioning(String(accepted.body.OriginatorConversationID)) };
}

describe('B2B payment request in the simulator (published request)', () => {
  it('acknowledges the published request with the two ids and ResponseCode "0"', async () => {
    expectAcknowledged(await post(B2B_PATH, payBill()));
  });

  it('refuses each missing or malformed field with the published 400.002.02', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['Initiator', { Initiator: '' }],
      ['SecurityCredential', { SecurityCredential: undefined }],
      ['CommandID', { CommandID: 'BusinessPayment' }],
      ['CommandID', { CommandID: 'constructor' }],
      ['SenderIdentifierType', { SenderIdentifierType: '2' }],
      ['SenderIdentifierType', { SenderIdentifierType: undefined }],
      ['RecieverIdentifierType', { RecieverIdentifierType: '2' }],
      ['RecieverIdentifierType', { RecieverIdentifierType: undefined, ReceiverIdentifierType: '4' }],
      ['Amount', { Amount: '10.50' }],
      ['Amount', { Amount: 0 }],
      ['Amount', { Amount: undefined }],
      ['PartyA', { PartyA: 'abc' }],
      ['PartyB', { PartyB: '254700000000' }],
      ['PartyB', { PartyB: undefined }],
      ['AccountReference', { AccountReference: undefined }],
      ['AccountReference', { AccountReference: 'x'.repeat(14) }],
      ['Requester', { Requester: '12345' }],
      ['Remarks', { Remarks: '' }],
      ['Remarks', { Remarks: 'x'.repeat(101) }],
      ['QueueTimeOutURL', { QueueTimeOutURL: undefined }],
      ['ResultURL', { ResultURL: 'not a url' }],
      ['Occasion', { Occassion: 'x'.repeat(101) }],
    ];
    for (const [field, override] of cases) {
      const refused = await post(B2B_PATH, payBill(override));
      expect(refused.status, `${field} ${JSON.stringify(override)}`).toBe(400);
      expect(refused.body).toMatchObject({
        errorCode: '400.002.02',
        errorMessage: `Bad Request - Invalid ${field}`,
      });
    }
    expect(simulator.payments.some((p) => p.partyA === 'abc')).toBe(false);
  });

  it('takes a till payment without AccountReference or Requester, and numbers where the samples have them', async () => {
    const till = payBill({
      CommandID: 'BusinessBuyGoods',
      RecieverIdentifierType: 2,
      SenderIdentifierType: 4,
      Amount: 5,
      PartyA: 600003,
      PartyB: 600004,
      AccountReference: undefined,
      Requester: undefined,
      Occassion: '',
    });
    const accepted = await post(B2B_PATH, till);
    expect(accepted.status).toBe(200);
    const result = await callbackMentioning(String(accepted.body.OriginatorConversationID));
    expect(result.ResultCode).toBe(0);
    expect(result.ReferenceData).toEqual({
      ReferenceItem: [{ Key: 'QueueTimeoutURL', Value: till.QueueTimeOutURL }],
    });
  });

  it('refuses a request without a valid bearer token as the other result APIs do', async () => {
    const refused = await post(B2B_PATH, payBill(), 'not-a-token');
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ errorCode: '401.002.01' });
  });
});

describe('B2B payment results and balances', () => {
  it('POSTs the published success result and moves both Utility Accounts', async () => {
    const accepted = await post(B2B_PATH, payBill({ PartyA: '600011', PartyB: '600012', Amount: '190' }));
    const result = await callbackMentioning(String(accepted.body.OriginatorConversationID));
    expect(result).toMatchObject({
      ResultType: 0,
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      OriginatorConversationID: accepted.body.OriginatorConversationID,
      ConversationID: accepted.body.ConversationID,
      TransactionID: expect.stringMatching(/^[A-Z][A-Z0-9]{9}$/),
      ReferenceData: {
        ReferenceItem: [
          { Key: 'BillReferenceNumber', Value: '353353' },
          { Key: 'QueueTimeoutURL', Value: `${receiver.url}/b2b/timeout` },
        ],
      },
    });
    const after = FLOAT_CENTS - 190_00n;
    const shillings = `${after / 100n}.${String(after % 100n).padStart(2, '0')}`;
    const balance = `{Amount={CurrencyCode=KES, MinimumAmount=${after}, BasicAmount=${shillings}}}`;
    expect(parameters(result)).toEqual({
      DebitAccountBalance: balance,
      Amount: '190.00',
      DebitPartyAffectedAccountBalance: `Utility Account|KES|${shillings}|${shillings}|0.00|0.00`,
      TransCompletedTime: expect.stringMatching(/^\d{14}$/),
      DebitPartyCharges: '',
      ReceiverPartyPublicName: '600012 - Simulated Business',
      Currency: 'KES',
      InitiatorAccountCurrentBalance: balance,
    });
    expect(await utilityOf('600011')).toBe(after);
    expect(await utilityOf('600012')).toBe(FLOAT_CENTS + 190_00n);
  });

  it('debits PartyA for a till payment but credits no Utility Account', async () => {
    const till = { CommandID: 'BusinessBuyGoods', RecieverIdentifierType: '2', Amount: '7' };
    const { result } = await paid({ ...till, PartyA: '600021', PartyB: '600022' });
    expect(result.ResultCode).toBe(0);
    expect(await utilityOf('600021')).toBe(FLOAT_CENTS - 7_00n);
    expect(await utilityOf('600022')).toBe(FLOAT_CENTS);
  });

  it('pays the whole float exactly, then declines the next shilling with ResultCode 1', async () => {
    const whole = String(DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS);
    expect((await paid({ PartyA: '600031', PartyB: '600032', Amount: whole })).result.ResultCode).toBe(0);
    expect(await utilityOf('600031')).toBe(0n);
    const next = await post(B2B_PATH, payBill({ PartyA: '600031', PartyB: '600032', Amount: '1' }));
    expect(next.status).toBe(200);
    const result = await callbackMentioning(String(next.body.OriginatorConversationID));
    expect(result).toMatchObject({
      ResultCode: 1,
      ResultDesc: 'The balance is insufficient for the transaction.',
      TransactionID: expect.stringMatching(/^[A-Z0-9]{3}0000000$/),
    });
    expect(result.ResultParameters).toBeUndefined();
    expect(await utilityOf('600031')).toBe(0n);
    expect(await utilityOf('600032')).toBe(FLOAT_CENTS + FLOAT_CENTS);
  });

  it('answers a wrong initiator credential with ResultCode 2001 and moves nothing', async () => {
    const accepted = await post(
      B2B_PATH,
      payBill({ PartyA: '600041', PartyB: '600042', SecurityCredential: 'not-encrypted' }),
    );
    expect(accepted.status).toBe(200);
    const result = await callbackMentioning(String(accepted.body.OriginatorConversationID));
    expect(result).toMatchObject({ ResultCode: 2001, ResultDesc: 'The initiator information is invalid.' });
    expect(result.ResultParameters).toBeUndefined();
    expect(await utilityOf('600041')).toBe(FLOAT_CENTS);
    expect(await utilityOf('600042')).toBe(FLOAT_CENTS);
  });

  it('makes a repeated request a second payment with new ids (the request carries no idempotency key)', async () => {
    const request = payBill({ PartyA: '600051', PartyB: '600052', Amount: '10' });
    const first = await post(B2B_PATH, request);
    const second = await post(B2B_PATH, request);
    expect(second.status).toBe(200);
    expect(second.body.OriginatorConversationID).not.toBe(first.body.OriginatorConversationID);
    expect(second.body.ConversationID).not.toBe(first.body.ConversationID);
    await callbackMentioning(String(first.body.OriginatorConversationID));
    await callbackMentioning(String(second.body.OriginatorConversationID));
    expect(await utilityOf('600051')).toBe(FLOAT_CENTS - 20_00n);
  });
});
