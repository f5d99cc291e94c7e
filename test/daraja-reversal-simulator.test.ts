/**
 * Daraja's Reversal request in the simulator, over raw HTTP as any client sends it: every field rule, the
 * acknowledgement, the result POSTed to ResultURL (success, already reversed, an unknown transaction or
 * amount or shortcode, a wrong credential), and the Utility Account that Account Balance reports moving
 * back. Rows of docs/rails/mpesa-daraja.md's tables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS,
  type DarajaSimulator,
  REVERSAL_PATH,
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

const FLOAT_CENTS = BigInt(DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS) * 100n;
const B2C_PATH = '/mpesa/b2c/v3/paymentrequest';

let simulator: DarajaSimulator;
let receiver: Receiver;
let raw: DarajaRawClient;

beforeAll(async () => {
  [simulator, receiver] = await Promise.all([startDarajaSimulator({ port: 0 }), startReceiver()]);
  raw = await darajaRawClient(simulator, receiver);
});

afterAll(async () => {
  await Promise.all([simulator.close(), receiver.close()]);
});

/** A completed B2C payment of `amount` shillings from `partyA`: its receipt. */
async function paidOut(partyA: string, amount: number): Promise<string> {
  const originator = `pay-${partyA}-${amount}-${Math.random()}`;
  const accepted = await raw.post(B2C_PATH, {
    OriginatorConversationID: originator,
    InitiatorName: SIM.initiatorName,
    SecurityCredential: SIM.securityCredential,
    CommandID: 'BusinessPayment',
    Amount: amount,
    PartyA: partyA,
    PartyB: '254700000000',
    Remarks: 'ok',
    QueueTimeOutURL: `${receiver.url}/b2c/timeout`,
    ResultURL: `${receiver.url}/b2c/result`,
  });
  expect(accepted.status).toBe(200);
  const result = await raw.callbackMentioning(originator);
  return String(result.TransactionID);
}

/** The published Reversal request, with the simulator's credentials. */
function reversal(overrides: Record<string, unknown> = {}) {
  return {
    Initiator: SIM.initiatorName,
    SecurityCredential: SIM.securityCredential,
    CommandID: 'TransactionReversal',
    TransactionID: 'PDU91HIVIT',
    Amount: '200',
    ReceiverParty: '603021',
    RecieverIdentifierType: '11',
    ResultURL: `${receiver.url}/reversal/result`,
    QueueTimeOutURL: `${receiver.url}/reversal/queue`,
    Remarks: 'Payment reversal',
    ...overrides,
  };
}

/** A reversal request with these overrides, acknowledged, and the result its ResultURL received. */
async function reversed(overrides: Record<string, unknown>) {
  const accepted = await raw.post(REVERSAL_PATH, reversal(overrides));
  expect(accepted.status).toBe(200);
  return { accepted, result: await raw.callbackMentioning(String(accepted.body.OriginatorConversationID)) };
}

describe('Reversal request in the simulator (published request)', () => {
  it('acknowledges the published request with the two ids and ResponseCode "0"', async () => {
    expectAcknowledged(await raw.post(REVERSAL_PATH, reversal()));
  });

  it('refuses each missing or malformed field with the published 400.002.02', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['Initiator', { Initiator: '' }],
      ['SecurityCredential', { SecurityCredential: undefined }],
      ['CommandID', { CommandID: 'TransactionStatusQuery' }],
      ['TransactionID', { TransactionID: undefined }],
      ['TransactionID', { TransactionID: 'short' }],
      ['Amount', { Amount: '1.50' }],
      ['Amount', { Amount: 0 }],
      ['ReceiverParty', { ReceiverParty: 'abc' }],
      ['RecieverIdentifierType', { RecieverIdentifierType: '4' }],
      ['RecieverIdentifierType', { RecieverIdentifierType: undefined, ReceiverIdentifierType: '11' }],
      ['ResultURL', { ResultURL: 'not a url' }],
      ['QueueTimeOutURL', { QueueTimeOutURL: undefined }],
      ['Remarks', { Remarks: 'x' }],
      ['Remarks', { Remarks: 'x'.repeat(101) }],
      ['Occasion', { Occasion: 'x'.repeat(101) }],
    ];
    for (const [field, override] of cases) {
      const refused = await raw.post(REVERSAL_PATH, reversal(override));
      expect(refused.status, `${field} ${JSON.stringify(override)}`).toBe(400);
      expect(refused.body).toMatchObject({
        errorCode: '400.002.02',
        errorMessage: `Bad Request - Invalid ${field}`,
      });
    }
  });

  it('refuses a request without a valid bearer token as the other result APIs do', async () => {
    const refused = await raw.post(REVERSAL_PATH, reversal(), 'not-a-token');
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ errorCode: '401.002.01' });
  });
});

describe('Reversal results and balances', () => {
  it('POSTs the published success result and moves the money back to the Utility Account', async () => {
    const receipt = await paidOut('600101', 250);
    expect(await raw.utilityOf('600101')).toBe(FLOAT_CENTS - 250_00n);
    const { accepted, result } = await reversed({
      TransactionID: receipt,
      Amount: 250,
      ReceiverParty: '600101',
    });
    expect(result).toMatchObject({
      ResultType: 0,
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      OriginatorConversationID: accepted.body.OriginatorConversationID,
      ConversationID: accepted.body.ConversationID,
      TransactionID: expect.stringMatching(/^[A-Z][A-Z0-9]{9}$/),
      ReferenceData: {
        ReferenceItem: {
          Key: 'QueueTimeoutURL',
          Value: 'https://internalsandbox.safaricom.co.ke/mpesa/reversalresults/v1/submit',
        },
      },
    });
    const whole = `${FLOAT_CENTS / 100n}.00`;
    expect(resultParameters(result)).toEqual({
      DebitAccountBalance: `Utility Account|KES|${whole}|${whole}|0.00|0.00`,
      Amount: 250,
      TransCompletedTime: expect.any(Number),
      OriginalTransactionID: receipt,
      Charge: 0,
      CreditPartyPublicName: '254700000000 - Simulated Customer',
      DebitPartyPublicName: '600101 - Simulated Business',
    });
    expect(await raw.utilityOf('600101')).toBe(FLOAT_CENTS);
  });

  it('answers a second reversal of one receipt with R000001 and moves nothing more', async () => {
    const receipt = await paidOut('600111', 40);
    expect(
      (await reversed({ TransactionID: receipt, Amount: 40, ReceiverParty: '600111' })).result.ResultCode,
    ).toBe(0);
    const { result } = await reversed({ TransactionID: receipt, Amount: 40, ReceiverParty: '600111' });
    expect(result).toMatchObject({
      ResultCode: 'R000001',
      ResultDesc: 'The transaction has already been reversed.',
      TransactionID: expect.stringMatching(/^[A-Z0-9]{3}0000000$/),
    });
    expect(result.ResultParameters).toBeUndefined();
    expect(await raw.utilityOf('600111')).toBe(FLOAT_CENTS);
  });

  it('answers an unknown receipt, another amount or another shortcode with R000002 and moves nothing', async () => {
    const receipt = await paidOut('600121', 30);
    for (const overrides of [
      { TransactionID: 'AAAAAAAAAA', Amount: 30, ReceiverParty: '600121' },
      { TransactionID: receipt, Amount: 31, ReceiverParty: '600121' },
      { TransactionID: receipt, Amount: 30, ReceiverParty: '600122' },
    ]) {
      const { result } = await reversed(overrides);
      expect(result).toMatchObject({
        ResultCode: 'R000002',
        ResultDesc: 'The OriginalTransactionID is invalid.',
      });
    }
    expect(await raw.utilityOf('600121')).toBe(FLOAT_CENTS - 30_00n);
    expect(await raw.utilityOf('600122')).toBe(FLOAT_CENTS);
  });

  it('answers a wrong initiator credential with ResultCode 2001 and moves nothing', async () => {
    const receipt = await paidOut('600131', 20);
    const { result } = await reversed({
      TransactionID: receipt,
      Amount: 20,
      ReceiverParty: '600131',
      SecurityCredential: 'not-encrypted',
    });
    expect(result).toMatchObject({ ResultCode: 2001, ResultDesc: 'The initiator information is invalid.' });
    expect(await raw.utilityOf('600131')).toBe(FLOAT_CENTS - 20_00n);
  });
});
