/**
 * Safeguarding's wire format: trust accounts, the closing balances their bank statements report, the daily
 * reports comparing them with customer money, and the sweeps between a rail's float and the trust account.
 */
import { ID_PREFIXES } from '../../../../domain/ids.ts';
import { SUPPORTED_CURRENCIES } from '../../../../domain/money.ts';
import { enumFilter } from '../../../../http/readRoutes.ts';
import { accessByScope } from '../../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../../http/schemaBuilders.ts';
import {
  currencySchema,
  daySchema,
  idSchema,
  nullableDaySchema,
  nullableIdSchema,
  nullableStringSchema,
  signedAmountSchema,
  timestampSchema,
} from '../../../../http/schemas.ts';
import {
  SAFEGUARDING_BALANCE_STATUSES,
  SAFEGUARDING_REPORT_STATUSES,
  TRUST_ACCOUNT_STATUSES,
  TRUST_ACCOUNT_TYPES,
} from '../../domain/safeguarding.ts';
import { SWEEP_DIRECTIONS, SWEEP_RAILS } from '../../domain/trustLedger.ts';

const TAGS = ['Safeguarding'];
/** Operators read and record safeguarding's figures (`compliance`); admins configure the trust accounts. */
export const ACCESS = accessByScope(TAGS);
/** A list's filter on the currency. */
export const currencyFilter = (description: string) => enumFilter(SUPPORTED_CURRENCIES, description);
const nullableSignedAmountSchema = (description: string) =>
  ({ type: ['string', 'null'], pattern: '^-?[0-9]+(\\.[0-9]+)?$', description }) as const;

export const trustAccountTypeSchema = {
  type: 'string',
  enum: TRUST_ACCOUNT_TYPES,
  description:
    '`bank_account`: a safeguarding account at a partner bank (fiat currencies). `custody_wallet`: a segregated wallet at a custodian (USDC and USDT, which live on chain).',
} as const;

export const trustAccountSchema = apiObjectSchema(
  'TrustAccount',
  'trust_account',
  'An account holding the organization’s customer money in one currency: a `bank_account` at a partner bank, or for USDC and USDT a `custody_wallet` at a custodian. Its closing balance counts from `active_from` until the day it was closed (`closed_on`).',
  {
    id: idSchema(ID_PREFIXES.trustAccount, 'Trust account id.'),
    currency: currencySchema,
    type: trustAccountTypeSchema,
    bank: { type: 'string', description: 'The bank holding it (for a `custody_wallet`, the custodian).' },
    account_reference: { type: 'string', description: 'The account’s number or reference at the bank.' },
    status: { type: 'string', enum: TRUST_ACCOUNT_STATUSES },
    active_from: daySchema('The first day (UTC) its closing balance counts.'),
    closed_on: nullableDaySchema('The day it was closed; from then on its balance no longer counts.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
);

export const safeguardingBalanceSchema = apiObjectSchema(
  'SafeguardingBalance',
  'safeguarding_balance',
  'A trust account’s closing balance for a day, as its bank statement reports it. `superseded` once a correction replaced it.',
  {
    id: idSchema(ID_PREFIXES.safeguardingBalance, 'Closing balance id.'),
    trust_account: idSchema(ID_PREFIXES.trustAccount, 'The trust account.'),
    currency: currencySchema,
    date: daySchema('The statement’s day.'),
    closing_balance: signedAmountSchema(
      'The closing balance, a decimal string (negative when overdrawn).',
      '1500.00',
    ),
    status: { type: 'string', enum: SAFEGUARDING_BALANCE_STATUSES },
    replaces: nullableStringSchema('The figure this one corrects.'),
    note: nullableStringSchema('Why it was corrected.'),
    created_by: {
      type: 'string',
      description:
        'The member or API key that reported it; for a figure read from the custodian, `rail_partner:` and the partner configuration’s id.',
    },
    created_at: timestampSchema,
    source: {
      type: 'object',
      additionalProperties: false,
      description:
        'Where the figure comes from: `statement`, entered from the bank’s or custodian’s statement; `custodian`, read from the custody partner’s balances (Fireblocks’ vault accounts) by the given balance query at `read_at`.',
      required: ['type', 'rail_partner', 'balance_query', 'read_at'],
      properties: {
        type: { type: 'string', enum: ['statement', 'custodian'] },
        rail_partner: nullableStringSchema('The custody partner configuration asked.'),
        balance_query: nullableStringSchema(
          'The rail partner balance query that answered (`GET /v1/rail-partner-balance-queries/{id}`).',
        ),
        read_at: {
          type: ['string', 'null'],
          format: 'date-time',
          description: 'When the custodian was read.',
        },
      },
    },
  },
);

export const safeguardingReportSchema = apiObjectSchema(
  'SafeguardingReport',
  'safeguarding_report',
  'The daily safeguarding check of one currency: customer money (the sum of every customer wallet’s posted balance as of the end of the day, UTC) against the trust accounts’ closing balances for that day. `ok` when they are equal, `shortfall` when the trust accounts hold less (a `safeguarding_shortfall` reconciliation exception and a `safeguarding.shortfall` event), `excess` when more, `missing_balance` while a trust account that counts that day has no closing balance (reporting it judges the day again). The closing balances are also compared with the ledger’s trust account as of the same instant (`ledger_trust_balance`, `ledger_difference`): a difference opens a `trust_balance_mismatch` exception.',
  {
    id: idSchema(ID_PREFIXES.safeguardingReport, 'Report id.'),
    currency: currencySchema,
    date: daySchema('The day checked (UTC).'),
    status: { type: 'string', enum: SAFEGUARDING_REPORT_STATUSES },
    customer_money: signedAmountSchema('Customer wallet balances summed, as of `as_of`.', '1500.00'),
    trust_balance: nullableSignedAmountSchema(
      'The closing balances of the trust accounts that count that day, summed; null while one is missing.',
    ),
    difference: nullableSignedAmountSchema(
      '`trust_balance` minus `customer_money`: negative is a shortfall; null while a balance is missing.',
    ),
    trust_balances: {
      type: 'array',
      description:
        'Each trust account that counts that day, with the closing balance used (null: not reported yet). Empty when none does: customer money in a currency without a trust account is a shortfall.',
      items: {
        type: 'object',
        required: ['trust_account', 'balance', 'closing_balance'],
        properties: {
          trust_account: idSchema(ID_PREFIXES.trustAccount, 'The trust account.'),
          balance: nullableStringSchema('The closing balance used.'),
          closing_balance: nullableSignedAmountSchema('Its figure.'),
        },
      },
    },
    ledger_trust_balance: nullableSignedAmountSchema(
      'What the ledger’s `trust` account for the currency held as of `as_of` (its posted debits less credits: bank and on-chain deposits received into trust, and sweeps). Null on reports written before the ledger had it.',
    ),
    ledger_difference: nullableSignedAmountSchema(
      '`trust_balance` minus `ledger_trust_balance`: not zero when the banks hold other than the ledger says (a `trust_balance_mismatch` reconciliation exception); null while a balance is missing.',
    ),
    exception: nullableStringSchema(
      'The `safeguarding_shortfall` reconciliation exception its shortfall opened.',
    ),
    mismatch_exception: nullableStringSchema(
      'The `trust_balance_mismatch` reconciliation exception its difference from the ledger opened.',
    ),
    as_of: { ...timestampSchema, description: 'The instant the ledger was read as of: the end of the day.' },
    created_at: timestampSchema,
    updated_at: { ...timestampSchema, description: 'When it was last judged (a balance reported late).' },
  },
);

export const SAFEGUARDING_SCHEMAS = [trustAccountSchema, safeguardingBalanceSchema, safeguardingReportSchema];

export const railSchema = {
  type: 'string',
  enum: SWEEP_RAILS,
  description:
    'The rail whose partner holds the float (its `rail_settlement` ledger account in the currency). USDC and USDT move on `digital_asset`, which carries nothing else.',
} as const;
export const directionSchema = {
  type: 'string',
  enum: SWEEP_DIRECTIONS,
  description:
    '`to_trust`: from the rail partner’s float into the trust account (debits the ledger’s `trust` account, credits the rail’s `rail_settlement`). `from_trust`: out of trust to the float (the reverse).',
} as const;

export const safeguardingSweepSchema = apiObjectSchema(
  'SafeguardingSweep',
  'safeguarding_sweep',
  'Money an operator moved between a rail partner’s float and the trust account, posted once to the ledger as a balanced entry between the rail’s settlement account and the currency’s trust account.',
  {
    id: idSchema(ID_PREFIXES.safeguardingSweep, 'Sweep id.'),
    currency: currencySchema,
    rail: railSchema,
    direction: directionSchema,
    amount: {
      type: 'string',
      pattern: '^[0-9]+(\\.[0-9]+)?$',
      description: 'Decimal string at the currency exponent.',
      examples: ['250000.00'],
    },
    reference: {
      type: 'string',
      description: 'The bank’s or partner’s reference of the movement; unique per rail and currency.',
    },
    value_date: daySchema('The day the money moved.'),
    trust_account: nullableIdSchema(ID_PREFIXES.trustAccount, 'The trust account it went to or came from.'),
    journal_entry: idSchema(ID_PREFIXES.journalEntry, 'Its ledger entry.'),
    created_by: { type: 'string', description: 'The member or API key that recorded it.' },
    created_at: timestampSchema,
  },
);

export const SAFEGUARDING_SWEEP_SCHEMAS = [safeguardingSweepSchema];
