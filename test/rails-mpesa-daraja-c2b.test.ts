/**
 * M-Pesa C2B (payers paying the organization's paybill on their own) end to end, over real HTTP both ways:
 * the adapter registers the service's callback addresses with the Daraja simulator, the simulator's payments
 * ask the service's validation address and POST confirmations to it, and the service credits the wallet the
 * payer's account reference names, once per M-Pesa transaction, whatever arrives twice, late or not at all.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type C2BConfirmationDelivery,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { configureSimulatedDaraja, darajaPost } from './support/daraja.ts';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const CREDENTIALS = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
/** The paybill payers pay: the STK shortcode, which the adapter registers. */
const PAYBILL = CREDENTIALS.stkShortCode;
const PAYER = '254708374149';
/** Late confirmations are held until the test delivers them. */
const TEST_LATE_CALLBACK_DELAY_MS = 60_000;
/** A port nothing listens on (discard): no answer comes from it. */
const UNREACHABLE_PORT = 9;
/** A validation address nothing listens on: M-Pesa gets no answer. */
const DEAD_VALIDATION_URL = `http://127.0.0.1:${UNREACHABLE_PORT}/validation`;
/** M-Pesa's wait for a validation answer, shortened for the dead address above. */
const TEST_VALIDATION_TIMEOUT_MS = 500;

interface StoredCallback {
  path: string;
  status: string;
  detail: string | null;
  transfer: string | null;
  body: string;
}

describe.each(BACKENDS)('M-Pesa C2B on %s', (backend) => {
  let t: TestApp;
  let sim: DarajaSimulator;
  let org: TestOrganization;
  let callbackUrl: string;
  let partnerId: string;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startDarajaSimulator({ lateCallbackDelayMs: TEST_LATE_CALLBACK_DELAY_MS });
    org = await newOrganization(t);
    const configured = await configureSimulatedDaraja(t, org.key, sim, { stk_short_code: PAYBILL });
    callbackUrl = configured.callbackUrl;
    partnerId = configured.id;
    // An admin registers the addresses (once: a retry with the same key replays, registering nothing more).
    for (let attempt = 0; attempt < 2; attempt++) {
      const registered = await api(t, 'POST', `/v1/rail-partners/${partnerId}/credit-urls`, {
        key: org.key,
        headers: { 'idempotency-key': 'register-c2b' },
      });
      expect(registered.statusCode, registered.body).toBe(200);
      expect(registered.data).toMatchObject({
        object: 'rail_partner_credit_urls',
        rail_partner: partnerId,
        partner: 'mpesa_daraja',
        account: PAYBILL,
        confirmation_url: `${callbackUrl}/c2b/confirmation`,
        validation_url: `${callbackUrl}/c2b/validation`,
        when_unanswered: 'Completed',
      });
    }
    expect(sim.requests.filter((r) => r.path === '/mpesa/c2b/v2/registerurl')).toHaveLength(1);
    expect(sim.c2bRegistrations.get(PAYBILL)).toEqual({
      shortCode: PAYBILL,
      responseType: 'Completed',
      confirmationUrl: `${callbackUrl}/c2b/confirmation`,
      validationUrl: `${callbackUrl}/c2b/validation`,
    });
  });
  afterAll(async () => {
    await sim?.close();
    await t?.close();
  });
  beforeEach(() => {
    sim.setC2BExternalValidation(PAYBILL, true);
  });

  /** A new KES wallet of the organization with its virtual account reference (what payers quote). */
  async function walletWithReference(): Promise<{ wallet: string; reference: string }> {
    const wallet = await fundedWallet(t, '0', 'KES', org.key);
    const made = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, { key: org.key });
    expect(made.statusCode, made.body).toBe(201);
    return { wallet, reference: made.data.reference as string };
  }

  async function pay(billRefNumber: string, amount: number, confirmation: C2BConfirmationDelivery = 'once') {
    const payment = await sim.pushC2BPayment({
      shortCode: PAYBILL,
      amount,
      msisdn: PAYER,
      billRefNumber,
      confirmation,
    });
    if (confirmation !== 'late') await sim.deliverPendingCallbacks();
    return payment;
  }

  const callbacks = async () =>
    (await api(t, 'GET', '/v1/rail-callbacks?limit=100', { key: org.key })).data.data as StoredCallback[];
  const callbacksOf = async (transId: string) =>
    (await callbacks()).filter((c) => c.body.includes(transId)).reverse();
  const inbound = async (wallet: string) =>
    (await api(t, 'GET', `/v1/transfers?wallet=${wallet}`, { key: org.key })).data.data as {
      id: string;
      status: string;
      status_reason: string;
      rail_reference: string;
      amount: string;
    }[];
  const openDeposits = async () =>
    (
      (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open&limit=100', { key: org.key })).data
        .data as { kind: string; details: Record<string, string> }[]
    ).filter((e) => e.kind === 'unmatched_deposit');

  it('a validated payment credits the wallet its reference names, once, and answers Daraja in its shape', async () => {
    const { wallet, reference } = await walletWithReference();
    // As payers type it: lower case, spaced.
    const typed = `${reference.slice(0, 6).toLowerCase()} ${reference.slice(6)}`;
    const payment = await pay(typed, 250);
    expect(payment).toMatchObject({ status: 'completed', decidedBy: 'accepted' });

    expect((await callbacksOf(payment.transId)).map((c) => [c.path, c.status, c.detail])).toEqual([
      ['c2b/validation', 'ignored', 'validation accepted'],
      ['c2b/confirmation', 'applied', null],
    ]);
    const [credit, ...others] = await inbound(wallet);
    expect(others).toEqual([]);
    expect(credit).toMatchObject({
      status: 'settled',
      status_reason: 'mobile_money_deposit',
      rail_reference: payment.transId,
      amount: '250.00',
    });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '250.00', current: '250.00' });
    const settled = await api(t, 'GET', '/v1/events?type=transfer.settled&limit=100', { key: org.key });
    expect(
      settled.data.data.filter((e: { data: { transfer_id: string } }) => e.data.transfer_id === credit?.id),
    ).toHaveLength(1);

    // Daraja read our answers: the validation's accept, the confirmation's acknowledgement.
    const answered = sim.deliveries.filter((d) => d.body.includes(payment.transId));
    expect(answered.map((d) => [d.url.split('/').slice(-2).join('/'), d.status])).toEqual([
      ['c2b/validation', 200],
      ['c2b/confirmation', 200],
    ]);
    const confirmation = JSON.parse(answered[1]?.body ?? '{}') as Record<string, string>;
    expect(Object.keys(confirmation)).toEqual([
      'TransactionType',
      'TransID',
      'TransTime',
      'TransAmount',
      'BusinessShortCode',
      'BillRefNumber',
      'InvoiceNumber',
      'OrgAccountBalance',
      'ThirdPartyTransID',
      'MSISDN',
      'FirstName',
      'MiddleName',
      'LastName',
    ]);
    expect(confirmation).toMatchObject({
      TransactionType: 'Pay Bill',
      TransAmount: '250.00',
      MSISDN: '2547 ***** 149',
    });
    await expectLedgerHealthy(t);
  });

  it('validation refuses an unknown reference with C2B00012 and nothing is credited or queued', async () => {
    const before = (await openDeposits()).length;
    const payment = await pay('MK000000000000', 40);
    expect(payment).toMatchObject({ status: 'cancelled', decidedBy: 'C2B00012' });
    expect((await callbacksOf(payment.transId)).map((c) => [c.path, c.detail])).toEqual([
      ['c2b/validation', 'validation rejected: unknown_account'],
    ]);
    // The answer Daraja got, as published.
    const validation = (await callbacksOf(payment.transId))[0];
    const answer = await fetch(`${callbackUrl}/c2b/validation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: validation?.body,
    });
    expect(await answer.json()).toEqual({ ResultCode: 'C2B00012', ResultDesc: 'Rejected' });
    expect(sim.c2bPayments.find((p) => p.transId === payment.transId)?.status).toBe('cancelled');
    expect(await openDeposits()).toHaveLength(before);
  });

  it('duplicated, re-sent and late confirmations credit once', async () => {
    const { wallet, reference } = await walletWithReference();
    const twice = await pay(reference, 10, 'twice');
    const stored = await callbacksOf(twice.transId);
    expect(stored.map((c) => c.status).sort()).toEqual(['applied', 'duplicate', 'ignored']);
    // The same payment re-sent in other bytes (M-Pesa retrying): recognised by its TransID.
    const applied = stored.find((c) => c.status === 'applied');
    const body = JSON.parse(applied?.body ?? '{}') as Record<string, string>;
    const resent = await fetch(`${callbackUrl}/c2b/confirmation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body, null, 1),
    });
    expect(resent.status).toBe(200);
    expect(await resent.json()).toEqual({ ResultCode: '0', ResultDesc: 'Success' });
    // A validation arriving after its confirmation (out of order) changes nothing either.
    const lateValidation = await fetch(`${callbackUrl}/c2b/validation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, OrgAccountBalance: '' }, null, 2),
    });
    expect(await lateValidation.json()).toEqual({ ResultCode: '0', ResultDesc: 'Accepted' });
    expect((await callbacksOf(twice.transId)).slice(3).map((c) => [c.status, c.detail])).toEqual([
      ['unchanged', `payment ${twice.transId} already applied`],
      ['ignored', 'validation accepted'],
    ]);
    expect(await inbound(wallet)).toHaveLength(1);

    const late = await pay(reference, 15, 'late');
    expect(late.status).toBe('completed');
    expect(await inbound(wallet)).toHaveLength(1);
    await sim.deliverPendingCallbacks();
    expect((await inbound(wallet)).map((c) => c.rail_reference).sort()).toEqual(
      [twice.transId, late.transId].sort(),
    );
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '25.00' });
    await expectLedgerHealthy(t);
  });

  it('without external validation a confirmation alone credits; a missing one credits nothing', async () => {
    sim.setC2BExternalValidation(PAYBILL, false);
    const { wallet, reference } = await walletWithReference();
    const payment = await pay(reference, 70);
    expect(payment).toMatchObject({ status: 'completed' });
    expect(payment.decidedBy).toBeUndefined();
    expect((await callbacksOf(payment.transId)).map((c) => [c.path, c.status])).toEqual([
      ['c2b/confirmation', 'applied'],
    ]);
    const missing = await pay(reference, 5, 'none');
    expect(missing.status).toBe('completed');
    expect(await callbacksOf(missing.transId)).toEqual([]);
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '70.00' });
  });

  it('applies the ResponseType when validation does not answer', async () => {
    const { wallet, reference } = await walletWithReference();
    const registration = sim.c2bRegistrations.get(PAYBILL);
    if (!registration) throw new Error('not registered');
    const register = (responseType: string) =>
      darajaPost(sim, '/mpesa/c2b/v1/registerurl', {
        ShortCode: PAYBILL,
        ResponseType: responseType,
        ConfirmationURL: registration.confirmationUrl,
        ValidationURL: DEAD_VALIDATION_URL,
      });
    sim.setC2BValidationTimeout(TEST_VALIDATION_TIMEOUT_MS);
    try {
      expect((await register('Cancelled')).status).toBe(200);
      const cancelled = await pay(reference, 30);
      expect(cancelled).toMatchObject({ status: 'cancelled', decidedBy: 'response_type' });
      expect((await register('Completed')).status).toBe(200);
      const completed = await pay(reference, 30);
      expect(completed).toMatchObject({ status: 'completed', decidedBy: 'response_type' });
    } finally {
      await darajaPost(sim, '/mpesa/c2b/v2/registerurl', {
        ShortCode: PAYBILL,
        ResponseType: registration.responseType,
        ConfirmationURL: registration.confirmationUrl,
        ValidationURL: registration.validationUrl,
      });
    }
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '30.00' });
  });

  it('a frozen wallet is refused at validation, and a confirmation for it is held for review', async () => {
    const { wallet, reference } = await walletWithReference();
    const compliance = await org.member(['compliance']);
    const frozen = await api(t, 'POST', `/v1/wallets/${wallet}/freeze`, {
      key: compliance.key,
      body: { reason: 'compliance_review' },
    });
    expect(frozen.statusCode, frozen.body).toBe(200);
    const refused = await pay(reference, 20);
    expect(refused).toMatchObject({ status: 'cancelled', decidedBy: 'C2B00016' });

    sim.setC2BExternalValidation(PAYBILL, false);
    const held = await pay(reference, 20);
    expect((await callbacksOf(held.transId)).map((c) => [c.status, c.detail])).toEqual([
      ['applied', 'held for review: the wallet is frozen'],
    ]);
    expect(await inbound(wallet)).toMatchObject([{ status: 'in_review', rail_reference: held.transId }]);
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '0.00', current: '0.00' });
    await expectLedgerHealthy(t);
  });

  it('a confirmation no wallet can take lands in the exception queue once', async () => {
    sim.setC2BExternalValidation(PAYBILL, false);
    const { wallet, reference } = await walletWithReference();
    const closed = await api(t, 'POST', `/v1/wallets/${wallet}/close`, {
      key: org.key,
      body: { reason: 'customer_request' },
    });
    expect(closed.statusCode, closed.body).toBe(200);
    const before = (await openDeposits()).length;
    const toClosed = await pay(reference, 12, 'twice');
    const unknown = await pay('SOMEONE ELSE', 13);
    expect((await callbacksOf(toClosed.transId)).map((c) => `${c.status}: ${c.detail ?? ''}`).sort()).toEqual(
      ['duplicate: ', 'exception: the wallet is closed'],
    );
    const opened = (await openDeposits()).slice(0, (await openDeposits()).length - before);
    expect(
      opened.map((e) => [e.details.partner_transaction_id, e.details.reason, e.details.amount_minor]),
    ).toEqual([
      [unknown.transId, 'no wallet has this account reference', '1300'],
      [toClosed.transId, 'the wallet is closed', '1200'],
    ]);
    expect(opened[0]?.details).toMatchObject({ rail: 'mobile_money', network: 'mpesa', currency: 'KES' });
    await expectLedgerHealthy(t);
  });

  it('registering is an admin action on an active partner that answers', async () => {
    const writer = await newOrganizationKey(t, ['read', 'write']);
    expect(
      (await api(t, 'POST', `/v1/rail-partners/${partnerId}/credit-urls`, { key: writer })).statusCode,
    ).toBe(403);
    const other = await newOrganization(t);
    const unreachable = await configureSimulatedDaraja(t, other.key, {
      url: `http://127.0.0.1:${UNREACHABLE_PORT}`,
    } as DarajaSimulator);
    const failed = await api(t, 'POST', `/v1/rail-partners/${unreachable.id}/credit-urls`, {
      key: other.key,
    });
    expect(failed.statusCode, failed.body).toBe(503);
    expect(failed.data.code).toBe('rail_unavailable');
    const disabled = await api(t, 'PATCH', `/v1/rail-partners/${unreachable.id}`, {
      key: other.key,
      body: { status: 'disabled' },
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    const refused = await api(t, 'POST', `/v1/rail-partners/${unreachable.id}/credit-urls`, {
      key: other.key,
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.data.code).toBe('credit_urls_not_registrable');
  });

  it("keeps the paybill's Utility Account as Account Balance reports it", async () => {
    sim.setC2BExternalValidation(PAYBILL, false);
    const { reference } = await walletWithReference();
    const completed = sim.c2bPayments.filter((p) => p.shortCode === PAYBILL && p.status === 'completed');
    const received = completed.reduce((sum, p) => sum + p.amount, 0);
    const payment = await pay(reference, 3);
    const confirmation = sim.deliveries.find(
      (d) => d.body.includes(payment.transId) && d.url.endsWith('/c2b/confirmation'),
    );
    const pushed = sim.pushes.filter((p) => p.businessShortCode === PAYBILL).length;
    expect(pushed).toBe(0);
    expect(JSON.parse(confirmation?.body ?? '{}').OrgAccountBalance).toBe(
      `${DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS + received + 3}.00`,
    );
  });
});
