/** Stablecoins on the wire: deposit addresses and deposits, conversion rates, quotes and conversions. */

import {
  CONVERSION_DIRECTIONS,
  CONVERSION_QUOTE_STATUSES,
  CONVERSION_QUOTE_TTL_MS,
} from '../../../domain/conversions.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { RATE_FRACTION_DIGITS_MAX, RATE_PATTERN_SOURCE } from '../../../domain/rates.ts';
import {
  CHAIN_TRANSACTION_STATES,
  DEPOSIT_CONFIRMATIONS_REQUIRED,
  DEPOSIT_STATUSES,
} from '../../../domain/stablecoins.ts';
import { accessByScope } from '../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  currencyCodeSchema,
  decimalStringSchema,
  digitalAssetNetworkSchema,
  digitalAssetSchema,
  feeScheduleDecisionSchema,
  idSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';

export const TAGS = ['Stablecoins'];
export const ACCESS = accessByScope(TAGS, 'stablecoins');

export const depositAddressSchema = apiObjectSchema(
  'DepositAddress',
  'deposit_address',
  'An address on a network that credits a stablecoin wallet: transfers of the wallet’s asset to it become deposits. One per wallet and network; it does not change.',
  {
    id: idSchema(ID_PREFIXES.depositAddress, 'Deposit address id.'),
    wallet: idSchema(ID_PREFIXES.wallet, 'The wallet it credits.'),
    asset: digitalAssetSchema,
    network: digitalAssetNetworkSchema,
    address: {
      type: 'string',
      description: 'As the network writes it (EVM addresses in their EIP-55 form).',
    },
    created_at: timestampSchema,
  },
);

export const depositSchema = apiObjectSchema(
  'Deposit',
  'deposit',
  `A transfer of a stablecoin to a deposit address, seen on chain. \`pending\` while it gathers confirmations; \`credited\` once it has \`required_confirmations\` (${Object.entries(
    DEPOSIT_CONFIRMATIONS_REQUIRED,
  )
    .map(([n, c]) => `${n} ${c}`)
    .join(
      ', ',
    )}): the wallet is credited by the inbound \`transfer\`; \`held_for_review\` instead when the Travel Rule required the originator’s data and it did not come: not credited until a compliance operator decides (a \`travel_rule\` review case), then \`credited\` or \`rejected\` (never credited, owed back to its sender); \`reorged\` when a reorganisation of the chain dropped it before it was final: never credited. A chain transfer (network, \`tx_hash\`, \`log_index\`) is credited once.`,
  {
    id: idSchema(ID_PREFIXES.deposit, 'Deposit id.'),
    wallet: idSchema(ID_PREFIXES.wallet, 'The wallet credited.'),
    deposit_address: idSchema(ID_PREFIXES.depositAddress, 'The deposit address paid.'),
    amount: decimalStringSchema('Decimal string in major units of the asset.'),
    currency: digitalAssetSchema,
    network: digitalAssetNetworkSchema,
    address: { type: 'string' },
    tx_hash: { type: 'string' },
    log_index: { type: 'integer', minimum: 0 },
    confirmations: { type: 'integer', minimum: 0 },
    required_confirmations: { type: 'integer', minimum: 1 },
    chain_state: {
      type: 'string',
      enum: CHAIN_TRANSACTION_STATES,
      description: 'Whether the chain still holds the transaction.',
    },
    status: { type: 'string', enum: DEPOSIT_STATUSES },
    transfer: nullableStringSchema('The inbound transfer that credited the wallet.'),
    travel_rule: {
      type: ['object', 'null'],
      description:
        'When the originator’s Travel Rule data was given, or required by the amount: the evidence record (`reference`) that keeps it, or that records it missing (operators read it among the wallet’s evidence). Once an operator supplied the data of a held deposit, `reference` names the record that keeps it.',
      required: ['reference', 'required', 'received'],
      properties: {
        reference: { type: 'string' },
        required: { type: 'boolean', description: 'Whether the amount required the data.' },
        received: { type: 'boolean', description: 'Whether the data was received.' },
      },
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
    credited_at: nullableTimestampSchema,
    reorged_at: nullableTimestampSchema,
    held_at: { ...nullableTimestampSchema, description: 'When it was held for review.' },
    rejected_at: { ...nullableTimestampSchema, description: 'When an operator rejected it.' },
  },
);

export const rateText = {
  type: 'string',
  pattern: RATE_PATTERN_SOURCE,
  description: `Units of \`to\` for one unit of \`from\`: a positive decimal string, at most ${RATE_FRACTION_DIGITS_MAX} decimals.`,
  examples: ['0.0077'],
} as const;

export const conversionRatesSchema = apiObjectSchema(
  'ConversionRates',
  'conversion_rates',
  'The organization’s conversion rates between fiat currencies and stablecoins, each direction its own.',
  {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['from', 'to', 'rate', 'version', 'updated_at'],
        properties: {
          from: currencyCodeSchema,
          to: currencyCodeSchema,
          rate: rateText,
          version: nullableStringSchema(
            'The rate version in force (`crv_…`): every change of a pair’s rate is a new version, with the rate it replaced and who set it (evidence `conversion.rates.update`). Null for a rate set before rates had versions.',
          ),
          updated_at: timestampSchema,
        },
      },
    },
  },
);

const conversionFields = {
  direction: {
    type: 'string',
    enum: CONVERSION_DIRECTIONS,
    description: '`mint`: fiat to stablecoin; `redeem`: stablecoin to fiat.',
  },
  from_wallet: idSchema(ID_PREFIXES.wallet, 'The wallet debited.'),
  to_wallet: idSchema(ID_PREFIXES.wallet, 'The wallet credited.'),
  from_amount: decimalStringSchema('Debited, in the source wallet’s currency.'),
  from_currency: { type: 'string' },
  to_amount: decimalStringSchema(
    'Credited, in the destination wallet’s currency: from_amount × rate, rounded down to the minor unit.',
  ),
  to_currency: { type: 'string' },
  rate: { type: 'string', description: 'Units of to_currency for one of from_currency, exact.' },
  rate_version: nullableStringSchema(
    'The rate version the quote was given at (`crv_…`, see `GET /v1/conversion-rates`); null for a quote given before rates had versions.',
  ),
  fee: decimalStringSchema(
    'The fee, in the source currency, paid on top of from_amount: what the fee schedule’s `conversion` rule for the source currency charges (zero without one).',
  ),
  total: decimalStringSchema('What the source wallet is debited: from_amount + fee.'),
  fee_schedule: feeScheduleDecisionSchema(
    'Which fee schedule version and rule decided `fee` (`rule` null: the version has no `conversion` rule for the source currency). Null for conversions quoted before fees applied to them.',
    true,
  ),
  created_at: timestampSchema,
} as const;

export const conversionQuoteSchema = {
  $id: 'ConversionQuote',
  type: 'object',
  description: `A rate and both amounts, fixed for ${CONVERSION_QUOTE_TTL_MS / 1000} seconds: execute it with \`POST /v1/conversions\`.`,
  required: ['object', 'id', 'status', 'conversion', 'expires_at', ...Object.keys(conversionFields)],
  properties: {
    object: { type: 'string', enum: ['conversion_quote'] },
    id: idSchema(ID_PREFIXES.conversionQuote, 'Quote id.'),
    status: { type: 'string', enum: CONVERSION_QUOTE_STATUSES },
    conversion: nullableStringSchema('The conversion that executed it.'),
    ...conversionFields,
    expires_at: timestampSchema,
  },
} as const;

export const conversionSchema = apiObjectSchema(
  'Conversion',
  'conversion',
  'A quote executed: the source wallet debited and the destination wallet credited in one transaction, through the organization’s conversion accounts (two journal entries, one per currency, each balanced).',
  {
    id: idSchema(ID_PREFIXES.conversion, 'Conversion id.'),
    quote: idSchema(ID_PREFIXES.conversionQuote, 'The quote executed.'),
    journal_entries: {
      type: 'array',
      items: { type: 'string' },
      description: 'The entry in the source currency, then the one in the destination currency.',
    },
    ...conversionFields,
  },
);

export const STABLECOIN_SCHEMAS = [
  depositAddressSchema,
  depositSchema,
  conversionRatesSchema,
  conversionQuoteSchema,
  conversionSchema,
];
