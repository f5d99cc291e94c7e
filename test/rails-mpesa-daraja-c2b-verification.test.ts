/**
 * M-Pesa C2B confirmations are not signed: whoever learns the confirmation address can POST one. These tests
 * play that attacker against the service and the Daraja simulator (both real HTTP servers): a confirmation
 * is credited only once Transaction Status, asked by its TransID, reports it completed to our paybill for the
 * same amount; a forged one (a TransID M-Pesa never issued, a real one with a larger amount, another
 * paybill's, a second story about a claimed payment, a forged status result) credits nothing and opens an
 * exception; repeated results change nothing twice, an unanswered question is asked again, and a payment
 * never vouched for within the window is refused. Last, the adapter's reading of each kind of result.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseC2BVerification } from '../src/modules/railPartners/partners/mpesaDaraja/c2bVerification.ts';
import { RAIL_CREDIT_UNCONFIRMED_CHECK_AFTER_MS } from '../src/modules/railPartners/useCases/creditCallbacks.ts';
import { CREDIT_VERIFICATION_ANSWER_GRACE_MS } from '../src/modules/railPartners/useCases/creditVerification.ts';
import {
  RAIL_CREDIT_VERIFICATION_RETRY_MS,
  RAIL_CREDIT_VERIFICATION_WINDOW_MS,
} from '../src/modules/railPartners/useCases/creditVerificationWorker.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import {
  runRailCallbackSweepOnce,
  runRailCreditVerificationWorkerOnce,
} from '../src/modules/railPartners/workers.ts';
import { MalformedCallbackError } from '../src/rails/partner.ts';
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { configureSimulatedDaraja } from './support/daraja.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const PAYBILL = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.stkShortCode;
/** Another business's paybill: its payments are real, but not ours. */
const OTHER_PAYBILL = '600999';
const PAYER = '254708374149';
/** Callbacks wait for the test to deliver them (a result must not race the worker recording its question). */
const TEST_CALLBACK_DELAY_MS = 60_000;

/** The published Transaction Status result's ResultParameter keys, in its order. */
const STATUS_RESULT_KEYS = [
  'DebitPartyName',
  'CreditPartyName',
  'OriginatorConversationID',
  'InitiatedTime',
  'DebitAccountType',
  'DebitPartyCharges',
  'TransactionReason',
  'ReasonType',
  'TransactionStatus',
  'FinalisedTime',
  'Amount',
  'ConversationID',
  'ReceiptNo',
];

interface StoredCallback {
  path: string;
  status: string;
  detail: string | null;
  body: string;
}

describe.each(BACKENDS)('M-Pesa C2B verification on %s', (backend) => {
  let t: TestApp;
  let sim: DarajaSimulator;
  let org: TestOrganization;
  let callbackUrl: string;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startDarajaSimulator({
      callbackDelayMs: TEST_CALLBACK_DELAY_MS,
      lateCallbackDelayMs: TEST_CALLBACK_DELAY_MS,
    });
    org = await newOrganization(t);
    const configured = await configureSimulatedDaraja(t, org.key, sim, { stk_short_code: PAYBILL });
    callbackUrl = configured.callbackUrl;
    const registered = await api(t, 'POST', `/v1/rail-partners/${configured.id}/credit-urls`, {
      key: org.key,
    });
    expect(registered.statusCode, registered.body).toBe(200);
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await sim?.close();
    await t?.close();
  });

  async function walletWithReference(): Promise<{ wallet: string; reference: string }> {
    const wallet = await fundedWallet(t, '0', 'KES', org.key);
    const made = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, { key: org.key });
    expect(made.statusCode, made.body).toBe(201);
    return { wallet, reference: made.data.reference as string };
  }

  /** POSTs to the service's callback address as anyone who learnt it could; returns Daraja's answer. */
  async function post(path: string, body: unknown, spaces?: number): Promise<unknown> {
    const answer = await fetch(`${callbackUrl}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body, null, spaces),
    });
    expect(answer.status).toBe(200);
    return answer.json();
  }

  /** A confirmation in the published shape. */
  const confirmation = (transId: string, billRefNumber: string, amount: number) => ({
    TransactionType: 'Pay Bill',
    TransID: transId,
    TransTime: '20261206101500',
    TransAmount: `${amount}.00`,
    BusinessShortCode: PAYBILL,
    BillRefNumber: billRefNumber,
    InvoiceNumber: '',
    OrgAccountBalance: '',
    ThirdPartyTransID: '',
    MSISDN: '2547 ***** 149',
    FirstName: 'MALLORY',
    MiddleName: '',
    LastName: '',
  });

  async function verify(): Promise<void> {
    await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
    await sim.deliverPendingCallbacks();
  }

  const callbacksOf = async (transId: string) =>
    ((await api(t, 'GET', '/v1/rail-callbacks?limit=100', { key: org.key })).data.data as StoredCallback[])
      .filter((c) => c.body.includes(transId) || c.path.endsWith(transId))
      .reverse();
  const exceptionsOf = async (transId: string) =>
    (
      (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open&limit=100', { key: org.key })).data
        .data as { id: string; kind: string; details: Record<string, string | null> }[]
    ).filter((e) => e.details.partner_transaction_id === transId);
  const credits = async (wallet: string) =>
    (await api(t, 'GET', `/v1/transfers?wallet=${wallet}`, { key: org.key })).data.data as {
      rail_reference: string;
      amount: string;
    }[];
  const statusQueriesFor = (transId: string) =>
    sim.requests.filter(
      (r) =>
        r.path === '/mpesa/transactionstatus/v1/query' &&
        (r.body as { TransactionID?: string } | undefined)?.TransactionID === transId,
    );

  it('a real payment is credited once, after Transaction Status vouches for it', async () => {
    const { wallet, reference } = await walletWithReference();
    const payment = await sim.pushC2BPayment({
      shortCode: PAYBILL,
      amount: 120,
      msisdn: PAYER,
      billRefNumber: reference,
    });
    await sim.deliverPendingCallbacks();
    expect(await credits(wallet)).toEqual([]);
    await verify();
    expect(statusQueriesFor(payment.transId)).toHaveLength(1);
    expect(statusQueriesFor(payment.transId)[0]?.body).toMatchObject({
      CommandID: 'TransactionStatusQuery',
      TransactionID: payment.transId,
      PartyA: PAYBILL,
      ResultURL: `${callbackUrl}/c2b/verify/${payment.transId}`,
    });
    expect(await credits(wallet)).toMatchObject([{ rail_reference: payment.transId, amount: '120.00' }]);

    // The same result again (the same bytes, then other bytes), and the worker again: nothing changes twice.
    const result = sim.deliveries.find((d) => d.url.endsWith(`/c2b/verify/${payment.transId}`));
    // The result as the published sample has it, about the C2B payment.
    const published = JSON.parse(result?.body ?? '{}').Result;
    expect(published).toMatchObject({ ResultCode: 0, TransactionID: payment.transId });
    const parameters = published.ResultParameters.ResultParameter as { Key: string; Value?: unknown }[];
    expect(parameters.map((p) => p.Key)).toEqual(STATUS_RESULT_KEYS);
    expect(Object.fromEntries(parameters.map((p) => [p.Key, p.Value]))).toMatchObject({
      DebitPartyName: `${PAYER} - SIMULATED`,
      CreditPartyName: `${PAYBILL} - Simulated Business`,
      TransactionStatus: 'Completed',
      Amount: 120,
      ReceiptNo: payment.transId,
    });
    await post(`c2b/verify/${payment.transId}`, JSON.parse(result?.body ?? '{}'));
    await post(`c2b/verify/${payment.transId}`, JSON.parse(result?.body ?? '{}'), 1);
    expect(await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps))).toBe(0);
    expect((await callbacksOf(payment.transId)).map((c) => [c.path.split('/')[1], c.status])).toEqual([
      ['confirmation', 'applied'],
      ['verify', 'applied'],
      ['verify', 'duplicate'],
      ['verify', 'unchanged'],
    ]);
    expect(await credits(wallet)).toHaveLength(1);
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '120.00' });
    await expectLedgerHealthy(t);
  });

  it('a forged confirmation credits nothing: an unknown TransID, a larger amount, another paybill', async () => {
    const { wallet, reference } = await walletWithReference();
    // Acknowledged as Daraja expects, without waiting for the verification.
    expect(await post('c2b/confirmation', confirmation('QFORGED001', reference, 5_000))).toEqual({
      ResultCode: '0',
      ResultDesc: 'Success',
    });
    // A real payment of ours, whose confirmation has not come: forged first with ten times the amount.
    const real = await sim.pushC2BPayment({
      shortCode: PAYBILL,
      amount: 40,
      msisdn: PAYER,
      billRefNumber: reference,
      confirmation: 'none',
    });
    await post('c2b/confirmation', confirmation(real.transId, reference, 400));
    // Another business's real payment, its TransID confirmed to us.
    const elsewhere = await sim.pushC2BPayment({
      shortCode: OTHER_PAYBILL,
      amount: 60,
      msisdn: PAYER,
      billRefNumber: 'X',
    });
    await post('c2b/confirmation', confirmation(elsewhere.transId, reference, 60));
    await verify();

    const expected: [string, string, string][] = [
      ['QFORGED001', 'not_found', 'the partner has no such payment'],
      [real.transId, 'completed', 'the partner reports amount_minor 4000, the confirmation 40000'],
      [elsewhere.transId, 'not_found', 'the partner has no such payment'],
    ];
    for (const [transId, reported, detail] of expected) {
      expect((await callbacksOf(transId)).map((c) => [c.status, c.detail])).toEqual([
        ['applied', 'awaiting verification with the partner'],
        ['exception', `unverified credit: ${detail}`],
      ]);
      expect(await exceptionsOf(transId)).toMatchObject([
        { kind: 'unmatched_callback', details: { reason: 'unverified_credit', reported, detail } },
      ]);
    }
    // The real confirmation arriving after (the true amount) is a second story: an exception, no credit.
    await post('c2b/confirmation', { ...confirmation(real.transId, reference, 40), FirstName: 'SIMULATED' });
    expect((await exceptionsOf(real.transId)).map((e) => e.details.reported).sort()).toEqual([
      'completed',
      'conflicting_confirmation',
    ]);
    expect(await credits(wallet)).toEqual([]);
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '0.00', current: '0.00' });
    const opened = await api(t, 'GET', '/v1/events?type=reconciliation.exception.opened&limit=100', {
      key: org.key,
    });
    const ids = new Set((await exceptionsOf('QFORGED001')).map((e) => e.id));
    expect(
      opened.data.data.filter((e: { data: { exception_id: string } }) => ids.has(e.data.exception_id)),
    ).toHaveLength(1);
    await expectLedgerHealthy(t);
  });

  it('a second story about a claimed payment (another account) holds it, and a forged result is not believed', async () => {
    const victim = await walletWithReference();
    const thief = await walletWithReference();
    const payment = await sim.pushC2BPayment({
      shortCode: PAYBILL,
      amount: 75,
      msisdn: PAYER,
      billRefNumber: victim.reference,
    });
    await sim.deliverPendingCallbacks();
    // A status result claiming completion, naming no question we asked.
    const forgedResult = {
      Result: {
        ConversationID: 'AG_20261206_forged',
        OriginatorConversationID: 'forged',
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        ResultType: 0,
        TransactionID: payment.transId,
        ResultParameters: {
          ResultParameter: [
            { Key: 'CreditPartyName', Value: `${PAYBILL} - Simulated Business` },
            { Key: 'TransactionStatus', Value: 'Completed' },
            { Key: 'Amount', Value: 75 },
            { Key: 'ReceiptNo', Value: payment.transId },
          ],
        },
      },
    };
    await post(`c2b/verify/${payment.transId}`, forgedResult);
    expect((await callbacksOf(payment.transId)).at(-1)).toMatchObject({
      status: 'received',
      detail: 'names no verification question asked yet',
    });
    await post('c2b/confirmation', confirmation(payment.transId, thief.reference, 75));
    await verify();
    expect((await callbacksOf(payment.transId)).map((c) => [c.path.split('/')[1], c.status])).toEqual([
      ['confirmation', 'applied'],
      ['verify', 'received'],
      ['confirmation', 'exception'],
    ]);
    expect(await exceptionsOf(payment.transId)).toMatchObject([
      {
        kind: 'unmatched_callback',
        details: {
          reason: 'unverified_credit',
          reported: 'conflicting_confirmation',
          account_reference: thief.reference,
        },
      },
    ]);
    expect(await credits(victim.wallet)).toEqual([]);
    expect(await credits(thief.wallet)).toEqual([]);
    await expectLedgerHealthy(t);
  });

  it('a validated payment whose confirmation never comes is credited once M-Pesa vouches for it', async () => {
    const { wallet, reference } = await walletWithReference();
    sim.setC2BExternalValidation(PAYBILL, true);
    const payment = await (async () => {
      try {
        return await sim.pushC2BPayment({
          shortCode: PAYBILL,
          amount: 55,
          msisdn: PAYER,
          billRefNumber: reference,
          confirmation: 'none',
        });
      } finally {
        sim.setC2BExternalValidation(PAYBILL, false);
      }
    })();
    expect(payment).toMatchObject({ status: 'completed', decidedBy: 'accepted' });
    // A validation anyone could POST, for a payment M-Pesa never made.
    await post('c2b/validation', { ...confirmation('QVALIDONLY', reference, 700), OrgAccountBalance: '' });
    await verify();
    expect(statusQueriesFor(payment.transId)).toHaveLength(0);
    t.deps.now = () => new Date(Date.now() + RAIL_CREDIT_UNCONFIRMED_CHECK_AFTER_MS + 1_000);
    try {
      await verify();
    } finally {
      t.deps.now = realNow;
    }
    expect(await credits(wallet)).toMatchObject([{ rail_reference: payment.transId, amount: '55.00' }]);
    expect((await callbacksOf('QVALIDONLY')).map((c) => [c.path, c.status, c.detail])).toEqual([
      ['c2b/validation', 'ignored', 'validation accepted'],
      ['c2b/verify/QVALIDONLY', 'ignored', 'the validated payment did not complete'],
    ]);
    expect(await exceptionsOf('QVALIDONLY')).toEqual([]);
    await expectLedgerHealthy(t);
  });

  it('an unanswered question is asked again; a payment never vouched for within the window is refused', async () => {
    const { wallet, reference } = await walletWithReference();
    const payment = await sim.pushC2BPayment({
      shortCode: PAYBILL,
      amount: 33,
      msisdn: PAYER,
      billRefNumber: reference,
    });
    await sim.deliverPendingCallbacks();
    await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
    // No result came: not asked again before the wait is over, then asked again.
    await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
    expect(statusQueriesFor(payment.transId)).toHaveLength(1);
    t.deps.now = () => new Date(Date.now() + RAIL_CREDIT_VERIFICATION_RETRY_MS + 1_000);
    try {
      await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
    } finally {
      t.deps.now = realNow;
    }
    expect(statusQueriesFor(payment.transId)).toHaveLength(2);
    // Both results arrive: the one to the last question credits; the stale one waits, then changes nothing.
    await sim.deliverPendingCallbacks();
    expect(await credits(wallet)).toMatchObject([{ rail_reference: payment.transId, amount: '33.00' }]);
    t.deps.now = () => new Date(Date.now() + CREDIT_VERIFICATION_ANSWER_GRACE_MS + 1_000);
    try {
      await runRailCallbackSweepOnce(t.deps, railPartnerDirectory(t.deps));
    } finally {
      t.deps.now = realNow;
    }
    const results = (await callbacksOf(payment.transId)).filter((c) => c.path.startsWith('c2b/verify/'));
    expect(results.map((c) => c.status).sort()).toEqual(['applied', 'unchanged']);

    const forged = 'QNEVER0001';
    await post('c2b/confirmation', confirmation(forged, reference, 900));
    t.deps.now = () => new Date(Date.now() + RAIL_CREDIT_VERIFICATION_WINDOW_MS + 60_000);
    try {
      await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
    } finally {
      t.deps.now = realNow;
    }
    expect(await exceptionsOf(forged)).toMatchObject([
      { kind: 'unmatched_callback', details: { reason: 'unverified_credit', reported: 'unanswered' } },
    ]);
    expect(statusQueriesFor(forged)).toHaveLength(0);
    expect(await credits(wallet)).toHaveLength(1);
    await expectLedgerHealthy(t);
  });
});

describe('a C2B verification result read by the adapter', () => {
  const transId = 'QABC123456';
  const result = (code: number, parameters?: Record<string, unknown>) => ({
    Result: {
      ConversationID: 'AG_20261206_0000abc',
      ResultCode: code,
      ...(parameters && {
        ResultParameters: {
          ResultParameter: Object.entries(parameters).map(([Key, Value]) => ({ Key, Value })),
        },
      }),
    },
  });
  const read = (body: unknown) =>
    parseC2BVerification(body as Record<string, unknown>, `c2b/verify/${transId}`, PAYBILL);
  const completed = {
    CreditPartyName: `${PAYBILL} - Business`,
    TransactionStatus: 'Completed',
    Amount: '120.00',
    ReceiptNo: transId,
  };

  it.each([
    [
      'completed to our paybill',
      result(0, completed),
      { outcome: 'completed', amountMinor: 12_000n, toOurAccount: true },
    ],
    [
      'another receiver',
      result(0, { ...completed, CreditPartyName: `${OTHER_PAYBILL} - Other` }),
      { outcome: 'completed', toOurAccount: false },
    ],
    [
      'an answer about another receipt',
      result(0, { ...completed, ReceiptNo: 'QOTHER0001' }),
      { outcome: 'not_found' },
    ],
    ['failed', result(0, { ...completed, TransactionStatus: 'Failed' }), { outcome: 'failed' }],
    ['still pending', result(0, { ...completed, TransactionStatus: 'Pending' }), { outcome: 'pending' }],
    ['not found', result(2033), { outcome: 'not_found' }],
    ['our initiator refused', result(2001), { outcome: 'pending' }],
  ])('%s', (_name, body, expected) => {
    expect(read(body)).toMatchObject({
      kind: 'credit_verification',
      partnerTransactionId: transId,
      queryReference: 'AG_20261206_0000abc',
      ...expected,
    });
  });

  it('a result without the query ConversationID is malformed', () => {
    expect(() => read({ Result: { ResultCode: 0 } })).toThrow(MalformedCallbackError);
  });
});
