/**
 * A model-based property through HTTP: random interleavings of freeze, unfreeze, approve, reject, clear,
 * cancel and rail-worker passes over transfers that wait (for an approval, a review or their rail) never move
 * money from or to a wallet that is not active at the moment it moves, never release a hold twice, and leave
 * the ledger verifying. After every step each transfer's status equals the model's; at the end each wallet's
 * balances equal what the model says settled and what still waits.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAmount, parseAmount } from '../../src/domain/money.ts';
import { api, BACKENDS, type Backend, startTestApp, type TestApp } from '../support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from '../support/ledger.ts';
import { newOrganization } from '../support/organizations.ts';

/** Runs per backend, transfers per run and the most steps of one run. */
const RUNS: Record<Backend, number> = { pglite: 12, postgres: 5 };
const TRANSFERS_PER_RUN = 4;
const STEPS_MAX = 14;
const FUNDING = '20000.00';
/** On the sample sanctions list the sandbox seed loads: a payout to it is held for review. */
const LISTED_NAME = 'Viktor Dragomirov';

type Kind = 'payout' | 'internal' | 'review';
type Wallet = 'source' | 'destination';
type Step =
  | { op: 'freeze' | 'unfreeze'; wallet: Wallet }
  | { op: 'approve' | 'reject' | 'clear' | 'cancel'; transfer: number }
  | { op: 'drain' };

const AMOUNT: Record<Kind, string> = { payout: '1000.00', internal: '1000.00', review: '100.00' };
const WAITING = new Set(['pending_approval', 'in_review', 'pending', 'processing']);

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    op: fc.constantFrom('freeze' as const, 'unfreeze' as const),
    wallet: fc.constantFrom('source' as const, 'destination' as const),
  }),
  fc.record({
    op: fc.constantFrom('approve' as const, 'reject' as const, 'clear' as const, 'cancel' as const),
    transfer: fc.nat(TRANSFERS_PER_RUN - 1),
  }),
  fc.constant({ op: 'drain' as const }),
);

describe.each(BACKENDS)('the release gate under random interleavings on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t.close();
  });

  async function run(kinds: Kind[], steps: Step[]) {
    const org = await newOrganization(t);
    const admin = await org.member(['admin']);
    const policy = await api(t, 'PUT', '/v1/policies', {
      key: admin.key,
      body: {
        rules: [
          {
            id: 'four_eyes',
            match: { amount: [{ currency: 'KES', gte: '1000.00' }] },
            action: 'require_approval',
            approval: { quorum: 1, roles: ['approver'] },
          },
        ],
      },
    });
    expect(policy.statusCode, policy.body).toBe(200);
    const compliance = await org.member(['compliance']);
    const approver = await org.member(['approver']);
    const initiator = await org.member(['initiator']);
    const wallets: Record<Wallet, string> = {
      source: await fundedWallet(t, FUNDING, 'KES', org.key),
      destination: await fundedWallet(t, '0', 'KES', org.key),
    };
    const active: Record<Wallet, boolean> = { source: true, destination: true };
    const transfers: { id: string; kind: Kind; status: string }[] = [];
    for (const [i, kind] of kinds.entries()) {
      const destination =
        kind === 'internal'
          ? wallets.destination
          : {
              ...mobileMoney(`+25471100${String(2000 + i)}`),
              ...(kind === 'review' ? { name: LISTED_NAME } : {}),
            };
      const created = await api(t, 'POST', '/v1/transfers', {
        key: initiator.key,
        body: { source: wallets.source, destination, amount: AMOUNT[kind], currency: 'KES' },
      });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.data.status).toBe(kind === 'review' ? 'in_review' : 'pending_approval');
      transfers.push({ id: created.data.id, kind, status: created.data.status });
    }
    /** What releasing a transfer now leads to: failed if a wallet it touches is not active. */
    const released = (kind: Kind) => {
      const walletsActive = active.source && (kind !== 'internal' || active.destination);
      if (!walletsActive) return 'failed';
      return kind === 'internal' ? 'settled' : 'pending';
    };

    for (const step of steps) {
      if ('wallet' in step) {
        const response = await api(t, 'POST', `/v1/wallets/${wallets[step.wallet]}/${step.op}`, {
          key: compliance.key,
          body: { reason: step.op === 'freeze' ? 'fraud_suspected' : 'review_cleared' },
        });
        if (response.statusCode === 200) active[step.wallet] = step.op === 'unfreeze';
        else expect(response.statusCode, response.body).toBe(409);
      } else if (step.op === 'drain') {
        await drainRails(t);
        for (const transfer of transfers) {
          if (transfer.status === 'pending') transfer.status = active.source ? 'settled' : 'failed';
        }
      } else {
        const transfer = transfers[step.transfer] as (typeof transfers)[number];
        const before = transfer.status;
        if (step.op === 'approve' || step.op === 'reject') {
          const approvalId = (await api(t, 'GET', `/v1/transfers/${transfer.id}`, { key: org.key })).data
            .approval;
          if (approvalId) {
            const vote = await api(t, 'POST', `/v1/approvals/${approvalId}/${step.op}`, {
              key: approver.key,
              body: {},
            });
            if (before === 'pending_approval') {
              expect(vote.statusCode, vote.body).toBe(200);
              transfer.status = step.op === 'reject' ? 'rejected' : released(transfer.kind);
            }
          }
        } else if (step.op === 'clear') {
          const cases = await api(t, 'GET', `/v1/reviews?transfer=${transfer.id}`, { key: compliance.key });
          const open = cases.data.data.find((c: { status: string }) => c.status === 'open');
          if (open) {
            const cleared = await api(t, 'POST', `/v1/reviews/${open.id}/clear`, {
              key: compliance.key,
              body: { note: 'not the listed person' },
            });
            expect(cleared.statusCode, cleared.body).toBe(200);
            transfer.status = released(transfer.kind);
          }
        } else {
          const canceled = await api(t, 'POST', `/v1/transfers/${transfer.id}/cancel`, {
            key: initiator.key,
            body: {},
          });
          if (before === 'pending' || before === 'pending_approval') {
            expect(canceled.statusCode, canceled.body).toBe(200);
            transfer.status = 'canceled';
          } else expect(canceled.statusCode).toBeGreaterThanOrEqual(400);
        }
      }
      for (const transfer of transfers) {
        const read = await api(t, 'GET', `/v1/transfers/${transfer.id}`, { key: org.key });
        expect(read.data.status, `${transfer.kind} ${transfer.id} after ${JSON.stringify(step)}`).toBe(
          transfer.status,
        );
      }
    }

    const minorOf = (kind: Kind) => parseAmount(AMOUNT[kind], 'KES');
    const sum = (pick: (status: string, kind: Kind) => boolean) =>
      transfers.reduce((total, x) => (pick(x.status, x.kind) ? total + minorOf(x.kind) : total), 0n);
    const settledOut = sum((status) => status === 'settled');
    const waiting = sum((status) => WAITING.has(status));
    const settledIn = sum((status, kind) => status === 'settled' && kind === 'internal');
    expect(await balanceOf(t, wallets.source, org.key)).toMatchObject({
      current: formatAmount(parseAmount(FUNDING, 'KES') - settledOut, 'KES'),
      pending: formatAmount(waiting, 'KES'),
    });
    expect(await balanceOf(t, wallets.destination, org.key)).toMatchObject({
      current: formatAmount(settledIn, 'KES'),
    });
    await expectLedgerHealthy(t);
  }

  it('never moves money from or to a frozen wallet, never releases a hold twice', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Kind>('payout', 'internal', 'review'), {
          minLength: TRANSFERS_PER_RUN,
          maxLength: TRANSFERS_PER_RUN,
        }),
        fc.array(stepArbitrary, { minLength: 1, maxLength: STEPS_MAX }),
        run,
      ),
      { numRuns: RUNS[backend] },
    );
  }, 300_000);
});
