/**
 * Property-based tests (fast-check). Pure ones over the posting rules and money, and a model-based one
 * that drives random sequences of transfers, settlements, failures, returns, cancellations and rail-worker
 * passes through the HTTP layer, checking after every step that the ledger verifies, that each wallet's
 * balances equal a model kept here, and that no wallet is below zero.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/domain/errors.ts';
import {
  AMOUNT_MINOR_MAX,
  type Currency,
  exponentOf,
  formatAmount,
  parseAmount,
  SUPPORTED_CURRENCIES,
} from '../src/domain/money.ts';
import {
  type AccountSums,
  applyPosting,
  directPostings,
  holdPostings,
  isBalanced,
  type Posting,
  type PostingPhase,
  postHoldPostings,
  voidHoldPostings,
  walletBalances,
  ZERO_SUMS,
} from '../src/modules/ledger/domain/ledger.ts';
import { decideDebit } from '../src/modules/ledger/domain/posting.ts';
import { verifyLedger } from '../src/modules/ledger/useCases/verify.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { sandboxRails } from '../src/rails/sandbox.ts';
import { api, BACKENDS, type Backend, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, drainRails, fundedWallet, mobileMoney } from './support/ledger.ts';

/** Runs of the model-based property per backend, and the most steps in one run. */
const MODEL_RUNS: Record<Backend, number> = { pglite: 25, postgres: 8 };
const MODEL_STEPS_MAX = 20;
/** Wallets each run creates and funds afresh. */
const MODEL_WALLETS = 3;
/** Opening balance of a model wallet, in KES minor units. */
const MODEL_FUNDING_MINOR = { min: 50_00n, max: 500_00n };
/** Mobile money carries at least 1.00 KES; amounts go past any wallet's balance on purpose. */
const MOBILE_AMOUNT_MINOR = { min: 1_00n, max: 300_00n };
/** M-Pesa moves whole shillings: a KES amount with cents is refused at creation. */
const CENTS_PER_SHILLING = 100n;
const INTERNAL_AMOUNT_MINOR = { min: 1n, max: 300_00n };
/** Runs of each pure property. */
const PURE_RUNS = 300;

const kes = (minor: bigint) => formatAmount(minor, 'KES');

// ---------------------------------------------------------------------------------------------------------
// Pure: posting rules
// ---------------------------------------------------------------------------------------------------------

const ACCOUNTS = ['acc_a', 'acc_b', 'acc_c'] as const;
const amountArb = fc.bigInt({ min: 1n, max: 10n ** 12n });

type LedgerAction =
  | { kind: 'hold'; debit: number; credit: number; amount: bigint }
  | { kind: 'direct'; debit: number; credit: number; amount: bigint }
  | { kind: 'release'; pick: number; post: boolean };

const pairArb = fc
  .tuple(fc.nat({ max: ACCOUNTS.length - 1 }), fc.nat({ max: ACCOUNTS.length - 2 }))
  .map(([debit, offset]) => ({ debit, credit: (debit + 1 + offset) % ACCOUNTS.length }));

const ledgerActionArb: fc.Arbitrary<LedgerAction> = fc.oneof(
  fc.tuple(pairArb, amountArb).map(([pair, amount]): LedgerAction => ({ kind: 'hold', ...pair, amount })),
  fc.tuple(pairArb, amountArb).map(([pair, amount]): LedgerAction => ({ kind: 'direct', ...pair, amount })),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), post: fc.boolean() }),
);

describe('posting rules (property)', () => {
  it('holds posted or voided, and direct movements, keep every sum equal to its entries', () => {
    fc.assert(
      fc.property(fc.array(ledgerActionArb, { maxLength: 40 }), (actions) => {
        const sums = new Map<string, AccountSums>(ACCOUNTS.map((id) => [id, ZERO_SUMS]));
        const open: Posting[][] = [];
        // What each account's sums must be, tallied independently of applyPosting.
        const expected = new Map<string, AccountSums>(ACCOUNTS.map((id) => [id, { ...ZERO_SUMS }]));
        const tally = (id: string) => expected.get(id) as AccountSums;
        const apply = (postings: Posting[]) => {
          expect(isBalanced(postings)).toBe(true);
          for (const p of postings)
            sums.set(p.accountId, applyPosting(sums.get(p.accountId) as AccountSums, p));
        };
        for (const action of actions) {
          if (action.kind === 'release') {
            if (open.length === 0) continue;
            const [hold] = open.splice(action.pick % open.length, 1) as [Posting[]];
            apply(action.post ? postHoldPostings(hold) : voidHoldPostings(hold));
            for (const p of hold) {
              const t = tally(p.accountId);
              if (p.side === 'debit') {
                t.debitsPending -= p.amountMinor;
                if (action.post) t.debitsPosted += p.amountMinor;
              } else {
                t.creditsPending -= p.amountMinor;
                if (action.post) t.creditsPosted += p.amountMinor;
              }
            }
            continue;
          }
          const debit = ACCOUNTS[action.debit] as string;
          const credit = ACCOUNTS[action.credit] as string;
          if (action.kind === 'hold') {
            const hold = holdPostings(debit, credit, action.amount, 'KES');
            apply(hold);
            open.push(hold);
            tally(debit).debitsPending += action.amount;
            tally(credit).creditsPending += action.amount;
          } else {
            apply(directPostings(debit, credit, action.amount, 'KES'));
            tally(debit).debitsPosted += action.amount;
            tally(credit).creditsPosted += action.amount;
          }
          for (const s of sums.values()) {
            expect(s.debitsPending >= 0n && s.creditsPending >= 0n).toBe(true);
          }
        }
        expect(Object.fromEntries(sums)).toEqual(Object.fromEntries(expected));
        // Over all accounts, debits equal credits in each phase, and what is still pending is the open holds.
        const total = [...sums.values()].reduce(
          (a, s) => ({
            debitsPending: a.debitsPending + s.debitsPending,
            debitsPosted: a.debitsPosted + s.debitsPosted,
            creditsPending: a.creditsPending + s.creditsPending,
            creditsPosted: a.creditsPosted + s.creditsPosted,
          }),
          ZERO_SUMS,
        );
        expect(total.debitsPosted).toBe(total.creditsPosted);
        expect(total.debitsPending).toBe(total.creditsPending);
        expect(total.debitsPending).toBe(open.flat().reduce((a, p) => a + p.amountMinor, 0n) / 2n);
      }),
      { numRuns: PURE_RUNS },
    );
  });

  const lineArb = fc.record({
    amount: amountArb,
    phase: fc.constantFrom<PostingPhase>('pending', 'posted', 'voided'),
    releasesHold: fc.boolean(),
    currency: fc.constantFrom<Currency>('KES', 'UGX', 'USDC'),
    debit: fc.constantFrom(...ACCOUNTS),
    credit: fc.constantFrom(...ACCOUNTS),
  });
  /** Entries built from debit/credit pairs of equal amounts, in a shuffled order. */
  const balancedArb = fc.array(lineArb, { minLength: 1, maxLength: 8 }).chain((pairs) =>
    fc.shuffledSubarray(
      pairs.flatMap((l): Posting[] => {
        const base = {
          phase: l.phase,
          releasesHold: l.releasesHold,
          amountMinor: l.amount,
          currency: l.currency,
        };
        return [
          { ...base, accountId: l.debit, side: 'debit' },
          { ...base, accountId: l.credit, side: 'credit' },
        ];
      }),
      { minLength: pairs.length * 2, maxLength: pairs.length * 2 },
    ),
  );

  it('isBalanced accepts entries whose debits and credits pair up per currency and phase', () => {
    fc.assert(
      fc.property(balancedArb, (postings) => {
        expect(isBalanced(postings)).toBe(true);
      }),
      { numRuns: PURE_RUNS },
    );
  });

  it('isBalanced refuses an entry with one line changed, dropped, or moved to another phase or currency', () => {
    fc.assert(
      fc.property(
        balancedArb,
        fc.nat(),
        fc.integer({ min: 0, max: 3 }),
        amountArb,
        (postings, pick, how, delta) => {
          const i = pick % postings.length;
          const line = postings[i] as Posting;
          const changed = [...postings];
          if (how === 0) changed[i] = { ...line, amountMinor: line.amountMinor + delta };
          if (how === 1) changed.splice(i, 1);
          if (how === 2) changed[i] = { ...line, currency: line.currency === 'KES' ? 'TZS' : 'KES' };
          if (how === 3) changed[i] = { ...line, phase: line.phase === 'posted' ? 'voided' : 'posted' };
          expect(isBalanced(changed)).toBe(false);
        },
      ),
      { numRuns: PURE_RUNS },
    );
  });

  it('decideDebit refuses exactly when available would go below zero, or the wallet is not active', () => {
    const sumsArb = fc
      .record({
        creditsPosted: amountArb,
        debitsPosted: fc.bigInt({ min: 0n, max: 10n ** 12n }),
        debitsPending: fc.bigInt({ min: 0n, max: 10n ** 12n }),
      })
      .map((s) => ({ ...s, creditsPending: 0n }));
    fc.assert(
      fc.property(
        sumsArb,
        amountArb,
        fc.constantFrom('active', 'frozen', 'closed'),
        (sums, amount, status) => {
          const { availableMinor, currentMinor, pendingMinor } = walletBalances(sums);
          expect(availableMinor).toBe(currentMinor - pendingMinor);
          const refusal = decideDebit(sums, status, amount);
          if (status !== 'active') expect(refusal).toBe('wallet_not_active');
          else expect(refusal).toBe(availableMinor < amount ? 'insufficient_funds' : undefined);
          if (refusal === undefined) {
            const after = holdPostings('w', 'x', amount, 'KES').reduce(
              (s, p) => (p.accountId === 'w' ? applyPosting(s, p) : s),
              sums,
            );
            expect(walletBalances(after).availableMinor).toBeGreaterThanOrEqual(0n);
          }
        },
      ),
      { numRuns: PURE_RUNS },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------
// Pure: money
// ---------------------------------------------------------------------------------------------------------

function validationCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error.errors[0]?.code;
    throw error;
  }
  return undefined;
}

describe('money (property)', () => {
  const currencyArb = fc.constantFrom(...SUPPORTED_CURRENCIES);

  it('parse(format(m)) is m for every amount up to BIGINT and every currency', () => {
    fc.assert(
      fc.property(currencyArb, fc.bigInt({ min: 0n, max: AMOUNT_MINOR_MAX }), (currency, minor) => {
        const text = formatAmount(minor, currency);
        const [, fraction = ''] = text.split('.');
        expect(fraction.length).toBe(exponentOf(currency));
        expect(parseAmount(text, currency)).toBe(minor);
      }),
      { numRuns: PURE_RUNS },
    );
  });

  /** A decimal string with leading zeros and up to `exponent + 2` decimals. */
  const decimalArb = fc.record({
    currency: currencyArb,
    zeros: fc.nat({ max: 3 }),
    whole: fc.bigInt({ min: 0n, max: 10n ** 12n }),
    fraction: fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 8 }),
  });

  it('format(parse(s)) is the canonical form of s; more significant decimals than the exponent are too_precise', () => {
    fc.assert(
      fc.property(decimalArb, ({ currency, zeros, whole, fraction }) => {
        const text = `${'0'.repeat(zeros)}${whole}${fraction ? `.${fraction}` : ''}`;
        const exponent = exponentOf(currency);
        const significant = fraction.replace(/0+$/, '');
        if (significant.length > exponent) {
          expect(validationCode(() => parseAmount(text, currency))).toBe('too_precise');
          return;
        }
        const canonical = `${whole}${exponent > 0 ? `.${significant.padEnd(exponent, '0')}` : ''}`;
        expect(formatAmount(parseAmount(text, currency), currency)).toBe(canonical);
      }),
      { numRuns: PURE_RUNS },
    );
  });

  it('formatting keeps order and sign', () => {
    fc.assert(
      fc.property(currencyArb, fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), (currency, minor) => {
        const text = formatAmount(minor, currency);
        expect(text.startsWith('-')).toBe(minor < 0n);
        expect(formatAmount(-minor, currency)).toBe(
          minor === 0n ? text : text.startsWith('-') ? text.slice(1) : `-${text}`,
        );
      }),
      { numRuns: PURE_RUNS },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------
// Model-based: random command sequences through the HTTP layer
// ---------------------------------------------------------------------------------------------------------

/** What the sandbox rail does with a mobile-money number (see src/rails/sandbox.ts). */
const PHONES = {
  settle: '+254700000000',
  fail: '+254700000001',
  timeout: '+254700000003',
} as const;
type Behaviour = keyof typeof PHONES;
const RAIL_FAILURE_CODE = 'recipient_not_registered';
const SANDBOX_FAILURE_CODE = 'sandbox_declined';
/** A transfer's ledger state follows from its status. */
const LEDGER_STATE_OF: Record<string, string> = {
  pending: 'pending',
  processing: 'pending',
  settled: 'posted',
  returned: 'posted',
  failed: 'voided',
  canceled: 'voided',
};

interface ModelWallet {
  currentMinor: bigint;
  pendingMinor: bigint;
}

interface ModelTransfer {
  id: string;
  kind: 'funding' | 'mobile_money' | 'internal';
  source: number | null;
  destination: number | null;
  amountMinor: bigint;
  behaviour: Behaviour | null;
  status: string;
  failureCode: string | null;
  /** Handed to the rail (it has a reference) and due for a check at the next pass. */
  submitted: boolean;
  due: boolean;
}

interface Model {
  wallets: ModelWallet[];
  /** Outbound transfers this run created. */
  transfers: ModelTransfer[];
  /** The sandbox collections that funded the wallets. */
  fundings: ModelTransfer[];
}

interface Real {
  t: TestApp;
  walletIds: string[];
}

const available = (w: ModelWallet) => w.currentMinor - w.pendingMinor;

function walletOf(m: Model, index: number | null): ModelWallet {
  const wallet = index === null ? undefined : m.wallets[index];
  if (!wallet) throw new Error(`no model wallet ${index}`);
  return wallet;
}

async function expectInvariants(m: Model, r: Real): Promise<void> {
  expect(await verifyLedger(r.t.deps.store)).toEqual([]);
  for (const [i, wallet] of m.wallets.entries()) {
    expect(available(wallet)).toBeGreaterThanOrEqual(0n);
    expect(await balanceOf(r.t, r.walletIds[i] as string), `wallet ${i}`).toMatchObject({
      current: kes(wallet.currentMinor),
      pending: kes(wallet.pendingMinor),
      available: kes(available(wallet)),
    });
  }
}

async function post(r: Real, url: string, body?: unknown) {
  const response = await api(r.t, 'POST', url, body === undefined ? {} : { body });
  return { status: response.statusCode, data: response.data };
}

class CreateMobileMoney implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly source: number,
    readonly amountMinor: bigint,
    readonly behaviour: Behaviour,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const response = await post(r, '/v1/transfers', {
      source: r.walletIds[this.source],
      destination: mobileMoney(PHONES[this.behaviour]),
      amount: kes(this.amountMinor),
      currency: 'KES',
    });
    const wallet = walletOf(m, this.source);
    if (this.amountMinor % CENTS_PER_SHILLING !== 0n) {
      // M-Pesa carries whole shillings: refused before anything is held.
      expect(response).toMatchObject({
        status: 422,
        data: { code: 'amount_not_supported', param: 'amount' },
      });
    } else if (available(wallet) < this.amountMinor) {
      expect(response).toMatchObject({ status: 422, data: { code: 'insufficient_funds' } });
    } else {
      expect(response).toMatchObject({ status: 201, data: { status: 'pending', ledger_state: 'pending' } });
      wallet.pendingMinor += this.amountMinor;
      m.transfers.push({
        id: response.data.id,
        kind: 'mobile_money',
        source: this.source,
        destination: null,
        amountMinor: this.amountMinor,
        behaviour: this.behaviour,
        status: 'pending',
        failureCode: null,
        submitted: false,
        due: true,
      });
    }
    await expectInvariants(m, r);
  }
  toString = () => `mobileMoney(w${this.source}, ${kes(this.amountMinor)}, ${this.behaviour})`;
}

class CreateInternal implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly source: number,
    readonly offset: number,
    readonly amountMinor: bigint,
  ) {}
  check = () => true;
  get destination() {
    return (this.source + 1 + this.offset) % MODEL_WALLETS;
  }
  async run(m: Model, r: Real): Promise<void> {
    const response = await post(r, '/v1/transfers', {
      source: r.walletIds[this.source],
      destination: r.walletIds[this.destination],
      amount: kes(this.amountMinor),
      currency: 'KES',
    });
    const from = walletOf(m, this.source);
    if (available(from) < this.amountMinor) {
      expect(response).toMatchObject({ status: 422, data: { code: 'insufficient_funds' } });
    } else {
      expect(response).toMatchObject({ status: 201, data: { status: 'settled', ledger_state: 'posted' } });
      from.currentMinor -= this.amountMinor;
      walletOf(m, this.destination).currentMinor += this.amountMinor;
      m.transfers.push({
        id: response.data.id,
        kind: 'internal',
        source: this.source,
        destination: this.destination,
        amountMinor: this.amountMinor,
        behaviour: null,
        status: 'settled',
        failureCode: null,
        submitted: false,
        due: false,
      });
    }
    await expectInvariants(m, r);
  }
  toString = () => `internal(w${this.source} → w${this.destination}, ${kes(this.amountMinor)})`;
}

type DriveAction = 'settle' | 'fail' | 'return' | 'cancel';

/** The statuses the model says an action applies to. */
const DRIVABLE_FROM: Record<DriveAction, readonly string[]> = {
  settle: ['pending', 'processing'],
  fail: ['pending', 'processing'],
  cancel: ['pending'],
  return: ['settled'],
};

/**
 * Which transfer an action picks: `live` ones are outbound transfers it applies to (any outbound one when
 * there are none), so that sequences reach deep states; `any` outbound one, to exercise refusals too; or
 * a collection that funded a wallet.
 */
type DriveTarget = 'live' | 'any' | 'fundings';

class Drive implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly action: DriveAction,
    readonly target: DriveTarget,
    readonly pick: number,
  ) {}
  candidates(m: Readonly<Model>): readonly ModelTransfer[] {
    if (this.target === 'fundings') return m.fundings;
    const live = m.transfers.filter((x) => DRIVABLE_FROM[this.action].includes(x.status));
    return this.target === 'live' && live.length > 0 ? live : m.transfers;
  }
  check = (m: Readonly<Model>) => this.candidates(m).length > 0;
  async run(m: Model, r: Real): Promise<void> {
    const candidates = this.candidates(m);
    const transfer = candidates[this.pick % candidates.length] as ModelTransfer;
    const url =
      this.action === 'cancel'
        ? `/v1/transfers/${transfer.id}/cancel`
        : `/v1/sandbox/transfers/${transfer.id}/${this.action}`;
    const response = await post(
      r,
      url,
      this.action === 'fail' ? { failure_code: SANDBOX_FAILURE_CODE } : undefined,
    );
    const refuse = () =>
      expect(response, `${this.action} ${transfer.status}`).toMatchObject({
        status: 409,
        data: { code: 'invalid_state_transition' },
      });

    switch (this.action) {
      case 'settle':
      case 'fail':
      case 'cancel': {
        if (!DRIVABLE_FROM[this.action].includes(transfer.status)) {
          refuse();
          break;
        }
        const to = { settle: 'settled', fail: 'failed', cancel: 'canceled' }[this.action];
        expect(response).toMatchObject({
          status: 200,
          data: { status: to, ledger_state: this.action === 'settle' ? 'posted' : 'voided' },
        });
        const wallet = walletOf(m, transfer.source);
        wallet.pendingMinor -= transfer.amountMinor;
        if (this.action === 'settle') wallet.currentMinor -= transfer.amountMinor;
        transfer.status = to;
        if (this.action === 'fail') transfer.failureCode = SANDBOX_FAILURE_CODE;
        break;
      }
      case 'return': {
        if (!DRIVABLE_FROM.return.includes(transfer.status)) {
          refuse();
          break;
        }
        if (transfer.kind === 'funding') {
          // Only outbound transfers can be returned.
          expect(response).toMatchObject({ status: 400, data: { code: 'validation_error' } });
          break;
        }
        // The money comes back from the rail, or from the receiving wallet, which must still have it.
        const payer = transfer.destination === null ? undefined : walletOf(m, transfer.destination);
        if (payer && available(payer) < transfer.amountMinor) {
          expect(response).toMatchObject({ status: 422, data: { code: 'insufficient_funds' } });
          break;
        }
        expect(response).toMatchObject({ status: 200, data: { status: 'returned' } });
        if (payer) payer.currentMinor -= transfer.amountMinor;
        walletOf(m, transfer.source).currentMinor += transfer.amountMinor;
        transfer.status = 'returned';
        break;
      }
    }
    await expectInvariants(m, r);
  }
  toString = () => `${this.action}(${this.target}#${this.pick})`;
}

/**
 * One rail-worker pass: a pending transfer is claimed (processing) and submitted, and becomes due for a
 * check at once; a submitted transfer that is due gets its outcome (a time-out is checked again only a
 * minute later, so it stays processing for the rest of the run).
 */
class RailPass implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    await runRailWorkerOnce(r.t.deps, sandboxRails());
    for (const transfer of m.transfers) {
      if (transfer.kind !== 'mobile_money') continue;
      if (transfer.status === 'pending') {
        Object.assign(transfer, { status: 'processing', submitted: true, due: true });
      } else if (transfer.status === 'processing' && transfer.submitted && transfer.due) {
        const wallet = walletOf(m, transfer.source);
        if (transfer.behaviour === 'timeout') {
          transfer.due = false;
        } else {
          wallet.pendingMinor -= transfer.amountMinor;
          if (transfer.behaviour === 'settle') wallet.currentMinor -= transfer.amountMinor;
          transfer.status = transfer.behaviour === 'settle' ? 'settled' : 'failed';
          if (transfer.behaviour === 'fail') transfer.failureCode = RAIL_FAILURE_CODE;
        }
      }
    }
    for (const transfer of m.transfers) {
      const got = await api(r.t, 'GET', `/v1/transfers/${transfer.id}`);
      expect(got.data, transfer.id).toMatchObject({
        status: transfer.status,
        failure_code: transfer.failureCode,
        ledger_state: LEDGER_STATE_OF[transfer.status],
      });
    }
    await expectInvariants(m, r);
  }
  toString = () => 'railPass';
}

const walletArb = fc.nat({ max: MODEL_WALLETS - 1 });
/** Mostly whole shillings, which M-Pesa carries; now and then an amount with cents, which it refuses. */
const mobileAmountArb = fc.oneof(
  {
    arbitrary: fc
      .bigInt({
        min: MOBILE_AMOUNT_MINOR.min / CENTS_PER_SHILLING,
        max: MOBILE_AMOUNT_MINOR.max / CENTS_PER_SHILLING,
      })
      .map((shillings) => shillings * CENTS_PER_SHILLING),
    weight: 4,
  },
  { arbitrary: fc.bigInt(MOBILE_AMOUNT_MINOR), weight: 1 },
);
const createMobileMoneyArb = fc
  .tuple(walletArb, mobileAmountArb, fc.constantFrom<Behaviour>('settle', 'fail', 'timeout'))
  .map(([w, amount, behaviour]) => new CreateMobileMoney(w, amount, behaviour));
const createInternalArb = fc
  .tuple(walletArb, fc.nat({ max: MODEL_WALLETS - 2 }), fc.bigInt(INTERNAL_AMOUNT_MINOR))
  .map(([w, offset, amount]) => new CreateInternal(w, offset, amount));
const driveTargetArb = fc.oneof(
  { arbitrary: fc.constant<DriveTarget>('live'), weight: 6 },
  { arbitrary: fc.constant<DriveTarget>('any'), weight: 3 },
  { arbitrary: fc.constant<DriveTarget>('fundings'), weight: 1 },
);
const driveArb = fc
  .tuple(fc.constantFrom<DriveAction>('settle', 'fail', 'return', 'cancel'), driveTargetArb, fc.nat())
  .map(([action, target, pick]) => new Drive(action, target, pick));
/**
 * Repeats weight the mix (fc.commands picks uniformly among these): money moving between wallets and
 * transfers being driven are where the interesting states are, e.g. returning a transfer whose
 * receiving wallet has spent the money since.
 */
const commandArbs = [
  createMobileMoneyArb,
  createMobileMoneyArb,
  createInternalArb,
  createInternalArb,
  driveArb,
  driveArb,
  driveArb,
  fc.constant(new RailPass()),
];

/**
 * Hand-written sequences run before the random ones, so the deepest paths are covered on every run: a
 * return the receiving wallet can no longer pay, and transfers moved through the rail's three outcomes.
 */
const MODEL_EXAMPLES: [bigint[], fc.AsyncCommand<Model, Real>[]][] = [
  [
    [100_00n, 50_00n, 100_00n],
    [
      new CreateInternal(0, 0, 100_00n), // w0 → w1: w1 now has 150.00
      new CreateMobileMoney(1, 120_00n, 'timeout'), // w1 holds 120.00, 30.00 available
      new Drive('return', 'live', 0), // w1 cannot give 100.00 back: 422
      new Drive('cancel', 'live', 0), // releases the 120.00
      new Drive('return', 'live', 0), // now it can
      new Drive('return', 'any', 0), // already returned: 409
    ],
  ],
  [
    [200_00n, 200_00n, 50_00n],
    [
      new CreateMobileMoney(0, 10_00n, 'settle'),
      new CreateMobileMoney(0, 20_00n, 'fail'),
      new CreateMobileMoney(1, 30_00n, 'timeout'),
      new RailPass(), // all three processing, submitted
      new Drive('cancel', 'any', 0), // too late: 409
      new RailPass(), // settled, failed, still processing (time-out)
      new Drive('settle', 'live', 0), // the time-out one, by the sandbox
      new Drive('return', 'live', 0),
      new Drive('fail', 'fundings', 2),
      new Drive('return', 'fundings', 2), // inbound: 400
    ],
  ],
];

/** Model-based runs share one database, so a whole file of them needs more than one test's default. */
const MODEL_TEST_TIMEOUT_MS = 180_000;

describe.each(BACKENDS)('random transfer sequences on %s (property)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await t.close();
  });

  async function runSequence(
    fundings: readonly bigint[],
    commands: Iterable<fc.AsyncCommand<Model, Real>>,
  ): Promise<void> {
    const setup = async () => {
      // Fresh wallets for every run, so runs do not see each other's balances.
      const walletIds: string[] = [];
      const model: Model = { wallets: [], transfers: [], fundings: [] };
      for (const funding of fundings) {
        const id = await fundedWallet(t, kes(funding));
        walletIds.push(id);
        model.wallets.push({ currentMinor: funding, pendingMinor: 0n });
        const listed = await api(t, 'GET', `/v1/transfers?wallet=${id}`);
        model.fundings.push({
          id: listed.data.data[0].id,
          kind: 'funding',
          source: null,
          destination: walletIds.length - 1,
          amountMinor: funding,
          behaviour: null,
          status: 'settled',
          failureCode: null,
          submitted: false,
          due: false,
        });
      }
      return { model, real: { t, walletIds } };
    };
    try {
      await fc.asyncModelRun(setup, commands);
    } finally {
      // Leave nothing due for the rail worker, so the next run's passes see only their own transfers.
      await drainRails(t);
    }
  }

  it(
    'keep the ledger verified and every wallet equal to the model after each step',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.bigInt(MODEL_FUNDING_MINOR), { minLength: MODEL_WALLETS, maxLength: MODEL_WALLETS }),
          fc.commands(commandArbs, { maxCommands: MODEL_STEPS_MAX, size: 'max' }),
          runSequence,
        ),
        {
          numRuns: MODEL_RUNS[backend],
          examples: MODEL_EXAMPLES,
          // Runs share the database and `ledger verify` looks at all of it, so once one run breaks the
          // ledger every later run fails too: shrinking would report a misleading sequence. The first
          // failing sequence is the true one.
          endOnFailure: true,
        },
      );
      expect(await verifyLedger(t.deps.store)).toEqual([]);
    },
    MODEL_TEST_TIMEOUT_MS,
  );
});
