/**
 * The release gate through HTTP: every movement that waits between being decided and moving money (a
 * transfer's approval or review, a payout queued for its rail, a pending transfer settled, a payment batch's
 * item, a collection, a loan's disbursement and instalments, a savings withdrawal) is checked again inside
 * the transaction that moves it. A wallet frozen while it waited stops it: it fails with the code a new
 * request would get, its hold is released exactly once, `transfer.failed` is emitted, and the ledger stays
 * exact. One scenario per kind in WAITING_MOVEMENTS: a kind added without one fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAITING_MOVEMENTS, type WaitingMovement } from '../../src/modules/ledger/domain/posting.ts';
import { runPaymentBatchPass } from '../../src/modules/paymentBatches/workers.ts';
import { LedgerWriter } from '../../src/modules/transfers/useCases/posting/writer.ts';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from '../support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from '../support/ledger.ts';
import { newOrganization, type TestOrganization } from '../support/organizations.ts';

/** On the sample sanctions list the sandbox seed loads (data/sanctions/sample.csv): held for review. */
const LISTED_NAME = 'Viktor Dragomirov';

const approvalRule = {
  id: 'four_eyes',
  description: 'Every payout of 1,000.00 KES or more needs an approver',
  match: { amount: [{ currency: 'KES', gte: '1000.00' }] },
  action: 'require_approval',
  approval: { quorum: 1, roles: ['approver'] },
};

describe.each(BACKENDS)('the release gate on %s', (backend) => {
  let t: TestApp;
  let writer: LedgerWriter;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    writer = new LedgerWriter(t.deps, 1);
  });
  afterAll(async () => {
    await t.close();
  });

  interface Team {
    org: TestOrganization;
    admin: { key: string; id: string };
    compliance: { key: string; id: string };
    approver: { key: string; id: string };
    initiator: { key: string; id: string };
  }

  async function team(rules: unknown[] = []): Promise<Team> {
    const org = await newOrganization(t);
    const admin = await org.member(['admin']);
    if (rules.length > 0) {
      const put = await api(t, 'PUT', '/v1/policies', { key: admin.key, body: { rules } });
      expect(put.statusCode, put.body).toBe(200);
    }
    return {
      org,
      admin,
      compliance: await org.member(['compliance']),
      approver: await org.member(['approver']),
      initiator: await org.member(['initiator']),
    };
  }

  const freeze = async (key: string, wallet: string, reason = 'fraud_suspected') => {
    const frozen = await api(t, 'POST', `/v1/wallets/${wallet}/freeze`, { key, body: { reason } });
    expect(frozen.statusCode, frozen.body).toBe(200);
  };
  const transferOf = async (key: string, id: string) =>
    (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data;
  const failedEventsOf = async (key: string, transfer: string) =>
    (await api(t, 'GET', '/v1/events?type=transfer.failed&limit=100', { key })).data.data.filter(
      (e: { data: { transfer_id: string } }) => e.data.transfer_id === transfer,
    );

  /** The transfer failed at its release: wallet_not_active, its hold given back once, one failure event. */
  async function expectFailedAtRelease(key: string, id: string, side: 'source' | 'destination') {
    const transfer = await transferOf(key, id);
    expect(transfer).toMatchObject({
      status: 'failed',
      failure_code: 'wallet_not_active',
      status_reason: `${side}_wallet_not_active`,
      ledger_state: 'voided',
    });
    expect(await failedEventsOf(key, id)).toHaveLength(1);
  }

  /** A payout accepted `pending` (not yet handed to its rail) from a wallet then frozen. */
  async function pendingPayoutOfFrozenWallet(phone: string) {
    const { org, compliance } = await team();
    const wallet = await fundedWallet(t, '500.00', 'KES', org.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source: wallet, destination: mobileMoney(phone), amount: '100.00', currency: 'KES' },
    });
    expect(created.data.status, created.body).toBe('pending');
    await freeze(compliance.key, wallet);
    return { org, wallet, payout: created.data.id as string };
  }

  /** A KES loan product with no fee or penalty, so a test's figures stay round. */
  async function loanProduct(
    key: string,
    terms: { name: string; term_months: number; amortisation: string },
  ) {
    const product = await api(t, 'POST', '/v1/loan-products', {
      key,
      body: {
        currency: 'KES',
        interest_rate_bps: 1200,
        origination_fee_bps: 0,
        grace_period_months: 0,
        penalty_rate_bps: 0,
        min_principal: '100.00',
        max_principal: '50000.00',
        ...terms,
      },
    });
    expect(product.statusCode, product.body).toBe(201);
    return product.data.id as string;
  }

  const scenarios: Record<WaitingMovement, () => Promise<void>> = {
    async transfer_approval() {
      // Point 3 of the insider review: a payout waits for approval, the wallet is frozen, the approval
      // completes. It must not reach the rail.
      const { org, compliance, approver, initiator } = await team([approvalRule]);
      const wallet = await fundedWallet(t, '60000.00', 'KES', org.key);
      const payout = await api(t, 'POST', '/v1/transfers', {
        key: initiator.key,
        body: {
          source: wallet,
          destination: mobileMoney('+254711000111'),
          amount: '50000.00',
          currency: 'KES',
        },
      });
      expect(payout.data.status, payout.body).toBe('pending_approval');
      await freeze(compliance.key, wallet);
      const vote = await api(t, 'POST', `/v1/approvals/${payout.data.approval}/approve`, {
        key: approver.key,
        body: {},
      });
      expect(vote.statusCode, vote.body).toBe(200);
      expect(vote.data.status).toBe('approved');
      await drainRails(t);
      await expectFailedAtRelease(org.key, payout.data.id, 'source');
      expect(await balanceOf(t, wallet, org.key)).toMatchObject({
        available: '60000.00',
        pending: '0.00',
        current: '60000.00',
      });
    },

    async transfer_review() {
      const { org, compliance } = await team();
      const wallet = await fundedWallet(t, '500.00', 'KES', org.key);
      const held = await api(t, 'POST', '/v1/transfers', {
        key: org.key,
        body: {
          source: wallet,
          destination: { ...mobileMoney('+254711222333'), name: LISTED_NAME },
          amount: '100.00',
          currency: 'KES',
        },
      });
      expect(held.data.status, held.body).toBe('in_review');
      await freeze(compliance.key, wallet);
      const cases = await api(t, 'GET', `/v1/reviews?transfer=${held.data.id}`, { key: compliance.key });
      const cleared = await api(t, 'POST', `/v1/reviews/${cases.data.data[0].id}/clear`, {
        key: compliance.key,
        body: { note: 'not the listed person' },
      });
      expect(cleared.statusCode, cleared.body).toBe(200);
      await drainRails(t);
      await expectFailedAtRelease(org.key, held.data.id, 'source');
      expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '500.00', pending: '0.00' });
    },

    async transfer_rail_handoff() {
      const { org, wallet, payout } = await pendingPayoutOfFrozenWallet('+254711000112');
      await drainRails(t);
      await expectFailedAtRelease(org.key, payout, 'source');
      expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '500.00', pending: '0.00' });
    },

    async transfer_settlement() {
      // The sandbox settles a payout the rail has not yet been handed: the same gate applies.
      const { org, wallet, payout } = await pendingPayoutOfFrozenWallet('+254711000113');
      const settled = await api(t, 'POST', `/v1/sandbox/transfers/${payout}/settle`, {
        key: org.key,
        body: {},
      });
      expect(settled.data.status, settled.body).toBe('failed');
      await expectFailedAtRelease(org.key, payout, 'source');
      expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '500.00', pending: '0.00' });
    },

    async payment_batch_item() {
      const { org, compliance } = await team();
      const wallet = await fundedWallet(t, '500.00', 'KES', org.key);
      const payee = await fundedWallet(t, '0', 'KES', org.key);
      const accepted = await api(t, 'POST', '/v1/payment-batches', {
        key: org.key,
        body: {
          source: wallet,
          currency: 'KES',
          reference: `gate-${Date.now()}`,
          items: [
            { reference: 'ok', destination: mobileMoney('+254711000031'), amount: '40.00' },
            { reference: 'frozen', destination: payee, amount: '60.00' },
          ],
        },
      });
      expect(accepted.statusCode, accepted.body).toBe(202);
      await freeze(compliance.key, payee, 'court_order');
      while ((await runPaymentBatchPass(t.deps, writer)) > 0) {}
      const failed = await api(t, 'GET', `/v1/payment-batches/${accepted.data.id}/items?status=failed`, {
        key: org.key,
      });
      expect(failed.data.data).toEqual([
        expect.objectContaining({ reference: 'frozen', failure_code: 'wallet_not_active', transfer: null }),
      ]);
      expect(await balanceOf(t, payee, org.key)).toMatchObject({ available: '0.00', current: '0.00' });
      expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '460.00', pending: '40.00' });
    },

    async collection() {
      // Money that arrives from outside for a frozen wallet is held for review, not credited.
      const { org, compliance } = await team();
      const wallet = await fundedWallet(t, '0', 'KES', org.key);
      await freeze(compliance.key, wallet);
      const funded = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
        key: org.key,
        body: { amount: '50.00' },
      });
      expect(funded.statusCode, funded.body).toBe(201);
      expect(funded.data).toMatchObject({ status: 'in_review', ledger_state: 'pending' });
      expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '0.00', current: '0.00' });
    },

    async loan_disbursement() {
      const { org, compliance, admin } = await team();
      const product = await loanProduct(admin.key, {
        name: 'Biashara',
        term_months: 12,
        amortisation: 'declining_balance',
      });
      const wallet = await fundedWallet(t, '0', 'KES', org.key);
      const applied = await api(t, 'POST', '/v1/loans', {
        key: org.key,
        body: { product, wallet, principal: '1000.00' },
      });
      expect(applied.data.status, applied.body).toBe('approved');
      await freeze(compliance.key, wallet);
      const disbursed = await api(t, 'POST', `/v1/loans/${applied.data.id}/disburse`, { key: org.key });
      expect(disbursed.statusCode, disbursed.body).toBe(409);
      expect(disbursed.data).toMatchObject({ code: 'wallet_not_active', param: 'wallet' });
      expect((await api(t, 'GET', `/v1/loans/${applied.data.id}`, { key: org.key })).data.status).toBe(
        'approved',
      );
      expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '0.00', current: '0.00' });
    },

    async loan_instalment() {
      const { org, compliance, admin } = await team();
      const product = await loanProduct(admin.key, { name: 'Short', term_months: 1, amortisation: 'flat' });
      const wallet = await fundedWallet(t, '500.00', 'KES', org.key);
      const applied = await api(t, 'POST', '/v1/loans', {
        key: org.key,
        body: { product, wallet, principal: '1000.00' },
      });
      const disbursed = await api(t, 'POST', `/v1/loans/${applied.data.id}/disburse`, { key: org.key });
      expect(disbursed.statusCode, disbursed.body).toBe(200);
      await freeze(compliance.key, wallet);
      const advanced = await api(t, 'POST', '/v1/sandbox/clock', {
        key: org.key,
        body: { advance_by_days: 40 },
      });
      expect(advanced.statusCode, advanced.body).toBe(200);
      const repayments = await api(t, 'GET', `/v1/loans/${applied.data.id}/repayments`, { key: org.key });
      expect(repayments.data.data).toEqual([]);
      expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '1500.00', current: '1500.00' });
    },

    async savings_withdrawal() {
      const { org, compliance } = await team();
      const owner = await createCustomer(t, org.key);
      const product = await api(t, 'POST', '/v1/savings-products', {
        key: org.key,
        body: {
          name: 'Savings',
          currency: 'KES',
          day_count: 'actual_365_fixed',
          access: 'instant',
          annual_rate_bps: 300,
        },
      });
      expect(product.statusCode, product.body).toBe(201);
      const savings = await api(t, 'POST', '/v1/savings-accounts', {
        key: org.key,
        body: { product: product.data.id, owner },
      });
      await api(t, 'POST', `/v1/sandbox/wallets/${savings.data.id}/fund`, {
        key: org.key,
        body: { amount: '500.00' },
      });
      const wallet = await api(t, 'POST', '/v1/wallets', { key: org.key, body: { owner, currency: 'KES' } });
      await freeze(compliance.key, wallet.data.id, 'court_order');
      const withdrawn = await api(t, 'POST', `/v1/savings-accounts/${savings.data.id}/withdrawals`, {
        key: org.key,
        body: { destination: wallet.data.id, amount: '100.00' },
      });
      expect(withdrawn.statusCode, withdrawn.body).toBe(409);
      expect(withdrawn.data).toMatchObject({ code: 'wallet_not_active', param: 'destination' });
      expect(await balanceOf(t, savings.data.id, org.key)).toMatchObject({ available: '500.00' });
    },
  };

  it('has a scenario for every kind of waiting movement', () => {
    expect(Object.keys(scenarios).sort()).toEqual([...WAITING_MOVEMENTS].sort());
  });

  it.each(WAITING_MOVEMENTS)('%s: a wallet frozen while it waited stops it', async (movement) => {
    await scenarios[movement]();
    await expectLedgerHealthy(t);
  });

  it('an approval does not credit a destination frozen after the transfer was created', async () => {
    // Point 4 of the insider review: an internal transfer to a wallet frozen under a court order.
    const { org, compliance, approver, initiator } = await team([approvalRule]);
    const source = await fundedWallet(t, '5000.00', 'KES', org.key);
    const destination = await fundedWallet(t, '0', 'KES', org.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: initiator.key,
      body: { source, destination, amount: '2000.00', currency: 'KES' },
    });
    expect(created.data.status, created.body).toBe('pending_approval');
    await freeze(compliance.key, destination, 'court_order');
    const vote = await api(t, 'POST', `/v1/approvals/${created.data.approval}/approve`, {
      key: approver.key,
      body: {},
    });
    expect(vote.statusCode, vote.body).toBe(200);
    await expectFailedAtRelease(org.key, created.data.id, 'destination');
    expect(await balanceOf(t, destination, org.key)).toMatchObject({ available: '0.00', current: '0.00' });
    expect(await balanceOf(t, source, org.key)).toMatchObject({ available: '5000.00', pending: '0.00' });
    await expectLedgerHealthy(t);
  });

  it('a payout approved after a newer policy version denies it fails policy_denied, with evidence', async () => {
    const { org, admin, approver, initiator } = await team([approvalRule]);
    const wallet = await fundedWallet(t, '5000.00', 'KES', org.key);
    const payout = await api(t, 'POST', '/v1/transfers', {
      key: initiator.key,
      body: { source: wallet, destination: mobileMoney('+254711000115'), amount: '2000.00', currency: 'KES' },
    });
    expect(payout.data.status, payout.body).toBe('pending_approval');
    const stricter = await api(t, 'PUT', '/v1/policies', {
      key: admin.key,
      body: {
        rules: [
          {
            id: 'no_large_payouts',
            match: { amount: [{ currency: 'KES', gte: '1500.00' }] },
            action: 'deny',
          },
        ],
      },
    });
    expect(stricter.statusCode, stricter.body).toBe(200);
    const vote = await api(t, 'POST', `/v1/approvals/${payout.data.approval}/approve`, {
      key: approver.key,
      body: {},
    });
    expect(vote.statusCode, vote.body).toBe(200);
    expect(await transferOf(org.key, payout.data.id)).toMatchObject({
      status: 'failed',
      failure_code: 'policy_denied',
      status_reason: 'policy_denied',
    });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '5000.00', pending: '0.00' });
    const evidence = await api(t, 'GET', `/v1/transfers/${payout.data.id}/evidence`, { key: org.key });
    const release = evidence.data.data.find((r: { kind: string }) => r.kind === 'transfer.release');
    expect(release?.data).toMatchObject({
      movement: 'transfer_approval',
      outcome: 'refused',
      failure_code: 'policy_denied',
      policy_version: stricter.data.version,
      rule: 'no_large_payouts',
      decided_under: { rule: 'four_eyes' },
    });
    await expectLedgerHealthy(t);
  });

  it('a payout approved after its customer’s verification lapsed fails limit_exceeded under the tier now', async () => {
    const { org, approver, initiator } = await team([approvalRule]);
    const verify = (customer: string, idNumber: string) =>
      api(t, 'POST', `/v1/customers/${customer}/verifications`, {
        key: org.key,
        body: {
          type: 'individual',
          legal_name: 'Neema Mwangi',
          date_of_birth: '1991-03-09',
          national_id: { type: 'national_id', number: idNumber },
          phone: '+254711555666',
          address: { line1: '5 Kenyatta Road', city: 'Nakuru', country: 'KE' },
        },
      });
    const owner = await createCustomer(t, org.key);
    expect((await verify(owner, '12340000')).data.status).toBe('verified');
    const wallet = (await api(t, 'POST', '/v1/wallets', { key: org.key, body: { owner, currency: 'KES' } }))
      .data.id as string;
    await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
      key: org.key,
      body: { amount: '200000.00' },
    });
    // Tier 1 allows 250,000.00 in one transfer; tier 0 allows 70,000.00.
    const payout = await api(t, 'POST', '/v1/transfers', {
      key: initiator.key,
      body: {
        source: wallet,
        destination: mobileMoney('+254711000116'),
        amount: '100000.00',
        currency: 'KES',
      },
    });
    expect(payout.data.status, payout.body).toBe('pending_approval');
    expect((await verify(owner, '12349991')).data.status).toBe('rejected');
    const vote = await api(t, 'POST', `/v1/approvals/${payout.data.approval}/approve`, {
      key: approver.key,
      body: {},
    });
    expect(vote.statusCode, vote.body).toBe(200);
    await drainRails(t);
    expect(await transferOf(org.key, payout.data.id)).toMatchObject({
      status: 'failed',
      failure_code: 'limit_exceeded',
    });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '200000.00', pending: '0.00' });
    // The amount it held is given back to the day's sum: a payout within tier 0 goes through.
    const small = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source: wallet, destination: mobileMoney('+254711000117'), amount: '500.00', currency: 'KES' },
    });
    expect(small.data.status, small.body).toBe('pending');
    await expectLedgerHealthy(t);
  });

  it('the member who made a payout cannot clear its review, whatever roles she holds', async () => {
    // Point 2 of the insider review, with keys now each member's own: a member holding initiator and
    // compliance makes a payout to a listed name and tries to clear its review herself.
    const { org, compliance } = await team();
    const both = await org.member(['initiator', 'compliance']);
    const wallet = await fundedWallet(t, '500.00', 'KES', org.key);
    const held = await api(t, 'POST', '/v1/transfers', {
      key: both.key,
      body: {
        source: wallet,
        destination: { ...mobileMoney('+254711222334'), name: LISTED_NAME },
        amount: '100.00',
        currency: 'KES',
      },
    });
    expect(held.data.status, held.body).toBe('in_review');
    const cases = await api(t, 'GET', `/v1/reviews?transfer=${held.data.id}`, { key: both.key });
    const reviewId = cases.data.data[0].id;
    const own = await api(t, 'POST', `/v1/reviews/${reviewId}/clear`, { key: both.key, body: {} });
    expect(own.statusCode, own.body).toBe(403);
    expect(own.data.code).toBe('self_review_forbidden');
    expect((await transferOf(org.key, held.data.id)).status).toBe('in_review');
    const other = await api(t, 'POST', `/v1/reviews/${reviewId}/clear`, { key: compliance.key, body: {} });
    expect(other.statusCode, other.body).toBe(200);
    expect((await transferOf(org.key, held.data.id)).status).toBe('pending');
    await expectLedgerHealthy(t);
  });

  it('a wallet unfrozen before the approval completes pays as decided', async () => {
    const { org, compliance, approver, initiator } = await team([approvalRule]);
    const wallet = await fundedWallet(t, '3000.00', 'KES', org.key);
    const payout = await api(t, 'POST', '/v1/transfers', {
      key: initiator.key,
      body: { source: wallet, destination: mobileMoney('+254711000114'), amount: '2000.00', currency: 'KES' },
    });
    await freeze(compliance.key, wallet);
    const unfrozen = await api(t, 'POST', `/v1/wallets/${wallet}/unfreeze`, {
      key: compliance.key,
      body: { reason: 'review_cleared' },
    });
    expect(unfrozen.statusCode, unfrozen.body).toBe(200);
    await api(t, 'POST', `/v1/approvals/${payout.data.approval}/approve`, { key: approver.key, body: {} });
    await drainRails(t);
    expect((await transferOf(org.key, payout.data.id)).status).toBe('settled');
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ current: '1000.00', pending: '0.00' });
    await expectLedgerHealthy(t);
  });
});
