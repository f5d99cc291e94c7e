/**
 * Digital accounts on the wire: the organization's settings, a wallet's statement as JSON and as CSV (RFC
 * 4180, formula cells neutralised, as exports write it: csvRecords), and their schemas.
 */

import { csvRecords } from '../../../domain/csv.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { formatAmount } from '../../../domain/money.ts';
import { closedObjectSchema } from '../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  currencySchema,
  decimalStringSchema,
  idSchema,
  nullableStringSchema,
  signedAmountSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import { accountDetailsProperties, presentAccountDetailsFields } from '../../wallets/index.ts';
import {
  BANK_NAME_LENGTH_MAX,
  type DigitalAccountSettings,
  STATEMENT_ENTRIES_MAX,
  type Statement,
} from '../domain.ts';

export const digitalAccountSettingsSchema = apiObjectSchema(
  'DigitalAccountSettings',
  'digital_account_settings',
  'The sponsor bank the organization issues account numbers under. `bank_code` and `bank_name` are null (and no wallet gets account details) until an admin sets them.',
  {
    bank_code: { type: ['string', 'null'], examples: ['01100'] },
    bank_name: { type: ['string', 'null'], examples: ['Equity Bank Kenya'] },
    updated_at: { ...timestampSchema, type: ['string', 'null'] },
  },
);

export const digitalAccountSettingsBodySchema = closedObjectSchema(
  {
    bank_code: {
      type: 'string',
      minLength: 2,
      maxLength: 11,
      description:
        'The sponsor bank’s code as a payer’s bank needs it beside the account number (a national bank and branch code, or a BIC): 2-11 letters or digits, stored upper-cased.',
    },
    bank_name: { type: 'string', minLength: 1, maxLength: BANK_NAME_LENGTH_MAX },
  },
  ['bank_code', 'bank_name'],
);

export function presentDigitalAccountSettings(settings: DigitalAccountSettings | undefined) {
  return {
    object: 'digital_account_settings',
    bank_code: settings?.bankCode ?? null,
    bank_name: settings?.bankName ?? null,
    updated_at: settings?.updatedAt.toISOString() ?? null,
  };
}

/** A statement entry's fields, in the order the CSV's columns give them. */
const STATEMENT_ENTRY_FIELDS = [
  'entry',
  'posted_at',
  'kind',
  'description',
  'counterparty',
  'transfer',
  'rail',
  'rail_reference',
  'amount',
  'fee',
  'balance',
] as const;

export const walletStatementSchema = apiObjectSchema(
  'WalletStatement',
  'wallet_statement',
  `A wallet's posted (\`current\`) balance over a period: the balance at \`from\`, every entry that moved it in order with the balance after it, and the balance at \`to\`; \`opening_balance\` + the entries' \`amount\`s = \`closing_balance\`. At most ${STATEMENT_ENTRIES_MAX} entries.`,
  {
    wallet: idSchema(ID_PREFIXES.wallet, 'Wallet id.'),
    currency: currencySchema,
    from: { ...timestampSchema, description: 'The period’s start: entries created at or after it.' },
    to: {
      ...timestampSchema,
      description:
        'The period’s end: entries created strictly before it. The time the statement was generated when the period asked for had not ended then.',
    },
    complete: {
      type: 'boolean',
      description: 'False when the period asked for had not ended: the statement so far.',
    },
    generated_at: timestampSchema,
    opening_balance: signedAmountSchema('The posted balance at `from`.', '-250.00'),
    closing_balance: signedAmountSchema('The posted balance at `to`.', '-250.00'),
    total_credits: { type: 'string', description: 'What the entries added.' },
    total_debits: decimalStringSchema('What the entries took off (a positive amount).'),
    entry_count: { type: 'integer' },
    account_details: {
      type: ['object', 'null'],
      description: 'The wallet’s account details, for the statement’s heading; null if it has none.',
      properties: accountDetailsProperties,
    },
    entries: {
      type: 'array',
      items: {
        type: 'object',
        required: [...STATEMENT_ENTRY_FIELDS],
        properties: {
          entry: idSchema(ID_PREFIXES.journalEntry, 'The journal entry (`GET /v1/ledger/entries/{id}`).'),
          posted_at: { ...timestampSchema, description: 'The entry’s `created_at`.' },
          kind: {
            type: 'string',
            enum: ['direct', 'post', 'reversal'],
            description:
              '`direct` (final at once), `post` (a hold made final: a payout settling), `reversal` (a settled transfer given back).',
          },
          description: { type: 'string', examples: ['Bank deposit', 'Payout by mobile_money'] },
          counterparty: nullableStringSchema(
            'The other party: the other wallet’s id, the payee masked as receipts show it, or the payer a collection recorded (name, or masked phone).',
          ),
          transfer: { type: ['string', 'null'] },
          rail: { type: ['string', 'null'] },
          rail_reference: nullableStringSchema(
            'The rail’s reference (a bank deposit’s bank reference, a payout’s receipt).',
          ),
          amount: signedAmountSchema('Positive: a credit; negative: a debit (fee included).', '-250.00'),
          fee: decimalStringSchema('The part of `amount` that is a fee (`0.00` when none).'),
          balance: signedAmountSchema('The posted balance after this entry.', '-250.00'),
        },
      },
    },
  },
);

export const DIGITAL_ACCOUNT_SCHEMAS = [digitalAccountSettingsSchema, walletStatementSchema];

export function presentStatement(s: Statement) {
  const amount = (minor: bigint) => formatAmount(minor, s.currency);
  return {
    object: 'wallet_statement',
    wallet: s.walletId,
    currency: s.currency,
    from: s.period.from.toISOString(),
    to: s.period.to.toISOString(),
    complete: !s.period.running,
    generated_at: s.generatedAt.toISOString(),
    opening_balance: amount(s.openingMinor),
    closing_balance: amount(s.closingMinor),
    total_credits: amount(s.creditsMinor),
    total_debits: amount(s.debitsMinor),
    entry_count: s.lines.length,
    account_details: s.accountDetails && presentAccountDetailsFields(s.accountDetails),
    entries: s.lines.map((line) => ({
      entry: line.entryId,
      posted_at: line.createdAt.toISOString(),
      kind: line.kind,
      description: line.description,
      counterparty: line.counterparty,
      transfer: line.transferId,
      rail: line.rail,
      rail_reference: line.railReference,
      amount: amount(line.netMinor),
      fee: amount(line.feeMinor),
      balance: amount(line.balanceMinor),
    })),
  };
}

/** The CSV's columns. `row` is `opening`, `entry` or `closing`; the first and last carry only the balance. */
export const STATEMENT_CSV_HEADER = ['row', ...STATEMENT_ENTRY_FIELDS, 'currency'] as const;

/** The statement as CSV: a header, the opening balance, a row per entry, the closing balance. */
export function statementCsv(s: Statement): string {
  const amount = (minor: bigint) => formatAmount(minor, s.currency);
  // A balance row has only its time, the balance and the currency: `entry` and the eight from `kind` to `fee` are empty.
  const balanceRow = (row: 'opening' | 'closing', at: Date, minor: bigint) => [
    row,
    null,
    at.toISOString(),
    ...Array.from({ length: 8 }, () => null),
    amount(minor),
    s.currency,
  ];
  const rows: (string | null)[][] = [
    balanceRow('opening', s.period.from, s.openingMinor),
    ...s.lines.map((line) => [
      'entry',
      line.entryId,
      line.createdAt.toISOString(),
      line.kind,
      line.description,
      line.counterparty,
      line.transferId,
      line.rail,
      line.railReference,
      amount(line.netMinor),
      amount(line.feeMinor),
      amount(line.balanceMinor),
      s.currency,
    ]),
    balanceRow('closing', s.period.to, s.closingMinor),
  ];
  return csvRecords([STATEMENT_CSV_HEADER, ...rows]);
}

/** The CSV's file name: the wallet and the period, in characters every file system takes. */
export function statementFileName(s: Statement): string {
  const compact = (d: Date) =>
    d
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
  return `statement-${s.walletId}-${compact(s.period.from)}-${compact(s.period.to)}.csv`;
}
