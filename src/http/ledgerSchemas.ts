/** The ledger on the wire: journal entries with their postings, and ledger accounts with their sums. */

import { ID_PREFIXES } from '../domain/ids.ts';
import { RAILS } from '../domain/transfers.ts';
import {
  ACCOUNT_KINDS,
  JOURNAL_ENTRY_KINDS,
  POSTING_PHASES,
  POSTING_SIDES,
} from '../modules/ledger/domain/ledger.ts';
import { idFirstApiObjectSchema } from './schemaBuilders.ts';
import {
  amountSchema,
  balanceProperties,
  currencySchema,
  idSchema,
  nullableIdSchema,
  signedAmountSchema,
  timestampSchema,
} from './schemas.ts';

/** Either kind of ledger account id: a wallet's account has the wallet's id; system accounts `acct_`. */
export const LEDGER_ACCOUNT_ID_PREFIXES = [ID_PREFIXES.wallet, ID_PREFIXES.ledgerAccount] as const;

export const journalEntrySchema = idFirstApiObjectSchema(
  'JournalEntry',
  'journal_entry',
  'One balanced, append-only change to the ledger: for each currency and phase, its postings debit as much as they credit.',
  {
    id: idSchema(ID_PREFIXES.journalEntry, 'Journal entry id.'),
    transfer: nullableIdSchema(ID_PREFIXES.transfer, 'The transfer that caused the entry.'),
    kind: {
      type: 'string',
      enum: JOURNAL_ENTRY_KINDS,
      description:
        '`hold` reserves funds (pending postings); `post` makes a hold final; `void` releases it; `direct` moves money at once; `reversal` gives a settled transfer back.',
    },
    hold_entry: nullableIdSchema(
      ID_PREFIXES.journalEntry,
      'For `post` and `void`: the hold entry they make final or release.',
    ),
    created_at: timestampSchema,
    postings: {
      type: 'array',
      description: 'The lines of the entry, in order.',
      items: {
        type: 'object',
        required: ['account', 'side', 'phase', 'releases_hold', 'amount', 'currency'],
        properties: {
          account: idSchema(LEDGER_ACCOUNT_ID_PREFIXES, 'The ledger account (a wallet id for wallets).'),
          side: { type: 'string', enum: POSTING_SIDES },
          phase: {
            type: 'string',
            enum: POSTING_PHASES,
            description:
              "`pending` adds to the side's pending sum; `posted` adds to its posted sum; `voided` takes the amount off its pending sum.",
          },
          releases_hold: {
            type: 'boolean',
            description: 'On a posted line: the amount also leaves the pending sum (a hold made final).',
          },
          amount: amountSchema('Positive decimal string at the currency exponent.'),
          currency: currencySchema,
        },
      },
    },
  },
);

const accountSumSchema = (description: string) => amountSchema(description, '0.00');

export const ledgerAccountSchema = idFirstApiObjectSchema(
  'LedgerAccount',
  'ledger_account',
  'An account of the double-entry ledger with its four running sums. Signed nets are credits minus debits; over all accounts of one currency they sum to zero.',
  {
    id: idSchema(LEDGER_ACCOUNT_ID_PREFIXES, 'Account id: the wallet id for a wallet, `acct_…` otherwise.'),
    kind: {
      type: 'string',
      enum: ACCOUNT_KINDS,
      description:
        '`wallet`: a customer wallet. `rail_settlement`: money held at a rail partner, its float (debited when a collection arrives). `rail_clearing`: money paid out through a rail (credited when a payout is held and posted). `payment_batch_reserve`: what a running payment batch still has to pay. `reconciliation_adjustment` and `rail_fee`: differences and fees booked from reconciliation; `rail_fee` also takes the network fees custody transactions pay in a ledger currency. `fee_income`: fees customers paid. `conversion`: the treasury’s side of a mint or redeem. `trust`: customer money held at trust banks or, for USDC and USDT, at a custodian (debited when a bank or on-chain deposit arrives and by a sweep into trust, credited by a sweep out).',
    },
    wallet: nullableIdSchema(ID_PREFIXES.wallet, 'The wallet, for a wallet account.'),
    rail: {
      type: ['string', 'null'],
      enum: [...RAILS, null],
      description: 'The rail, for a system account.',
    },
    currency: currencySchema,
    debits_pending: accountSumSchema('Held debits: pending, neither posted nor voided yet.'),
    debits_posted: accountSumSchema('Final debits.'),
    credits_pending: accountSumSchema('Held credits.'),
    credits_posted: accountSumSchema('Final credits.'),
    net_pending: signedAmountSchema('credits_pending − debits_pending (signed).', '-1500.00'),
    net_posted: signedAmountSchema(
      'credits_posted − debits_posted (signed): for a wallet its current balance; negative is a debit balance.',
      '-1500.00',
    ),
    balance: {
      type: ['object', 'null'],
      description:
        "A wallet account's balances, exactly as `GET /v1/wallets/{id}/balance`; null for system accounts.",
      required: ['available', 'pending', 'current'],
      properties: balanceProperties,
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
);
