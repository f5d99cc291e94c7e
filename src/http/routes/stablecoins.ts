/**
 * Stablecoin routes: deposit addresses per wallet and network, deposits, conversion rates, quotes and
 * conversions (mint and redeem). The sandbox's simulated chain has its own routes (sandboxChain.ts).
 */
import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../app/apiKeys.ts';
import type { StoredConversionRate } from '../../app/conversions.ts';
import {
  createQuote,
  executeQuote,
  getConversion,
  getConversionRates,
  getQuote,
  listOrganizationConversions,
  prepareConversion,
  prepareQuote,
  putConversionRates,
  type QuoteInput,
} from '../../app/conversions.ts';
import {
  getDeposit,
  issueDepositAddress,
  listOrganizationDeposits,
  prepareDepositAddress,
  walletDepositAddresses,
} from '../../app/deposits.ts';
import type { Deps } from '../../app/deps.ts';
import { failureResult } from '../../app/idempotency.ts';
import type { AmlRule } from '../../domain/decisions/aml.ts';
import { RATE_FRACTION_DIGITS_MAX, RATE_INTEGER_DIGITS_MAX } from '../../domain/decisions/travelRule.ts';
import {
  DIGITAL_ASSET_NETWORKS,
  DIGITAL_ASSETS,
  type DigitalAssetNetwork,
} from '../../domain/digitalAssets.ts';
import type { FeeSchedule } from '../../domain/fees.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { numberSourceOf } from '../../domain/jsonNumbers.ts';
import { formatAmount, SUPPORTED_CURRENCIES } from '../../domain/money.ts';
import {
  CHAIN_TRANSACTION_STATES,
  CONVERSION_DIRECTIONS,
  CONVERSION_QUOTE_STATUSES,
  CONVERSION_QUOTE_TTL_MS,
  CONVERSION_RATES_MAX,
  type Conversion,
  type ConversionQuote,
  DEPOSIT_CONFIRMATIONS_REQUIRED,
  DEPOSIT_STATUSES,
  type Deposit,
  type DepositAddress,
  type DepositStatus,
} from '../../domain/stablecoins.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { type ListQuery, pageRequestOf, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  feeScheduleDecisionSchema,
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';
import { governedWrite, pendingChangeResponse } from './changes.ts';

const TAGS = ['Stablecoins'];
const amountField = (description: string) => ({ type: 'string', description }) as const;

export const depositAddressSchema = {
  $id: 'DepositAddress',
  type: 'object',
  description:
    'An address on a network that credits a stablecoin wallet: transfers of the wallet’s asset to it become deposits. One per wallet and network; it does not change.',
  required: ['object', 'id', 'wallet', 'asset', 'network', 'address', 'created_at'],
  properties: {
    object: { type: 'string', enum: ['deposit_address'] },
    id: idSchema(ID_PREFIXES.depositAddress, 'Deposit address id.'),
    wallet: idSchema(ID_PREFIXES.wallet, 'The wallet it credits.'),
    asset: { type: 'string', enum: DIGITAL_ASSETS },
    network: { type: 'string', enum: DIGITAL_ASSET_NETWORKS },
    address: {
      type: 'string',
      description: 'As the network writes it (EVM addresses in their EIP-55 form).',
    },
    created_at: timestampSchema,
  },
} as const;

export const depositSchema = {
  $id: 'Deposit',
  type: 'object',
  description: `A transfer of a stablecoin to a deposit address, seen on chain. \`pending\` while it gathers confirmations; \`credited\` once it has \`required_confirmations\` (${Object.entries(
    DEPOSIT_CONFIRMATIONS_REQUIRED,
  )
    .map(([n, c]) => `${n} ${c}`)
    .join(
      ', ',
    )}): the wallet is credited by the inbound \`transfer\`; \`held_for_review\` instead when the Travel Rule required the originator’s data and it did not come: not credited until a compliance operator decides (a \`travel_rule\` review case), then \`credited\` or \`rejected\` (never credited, owed back to its sender); \`reorged\` when a reorganisation of the chain dropped it before it was final: never credited. A chain transfer (network, \`tx_hash\`, \`log_index\`) is credited once.`,
  required: [
    'object',
    'id',
    'wallet',
    'deposit_address',
    'amount',
    'currency',
    'network',
    'address',
    'tx_hash',
    'log_index',
    'confirmations',
    'required_confirmations',
    'chain_state',
    'status',
    'transfer',
    'travel_rule',
    'created_at',
    'updated_at',
    'credited_at',
    'reorged_at',
    'held_at',
    'rejected_at',
  ],
  properties: {
    object: { type: 'string', enum: ['deposit'] },
    id: idSchema(ID_PREFIXES.deposit, 'Deposit id.'),
    wallet: idSchema(ID_PREFIXES.wallet, 'The wallet credited.'),
    deposit_address: idSchema(ID_PREFIXES.depositAddress, 'The deposit address paid.'),
    amount: amountField('Decimal string in major units of the asset.'),
    currency: { type: 'string', enum: DIGITAL_ASSETS },
    network: { type: 'string', enum: DIGITAL_ASSET_NETWORKS },
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
    transfer: { type: ['string', 'null'], description: 'The inbound transfer that credited the wallet.' },
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
} as const;

const rateText = {
  type: 'string',
  pattern: `^[0-9]{1,${RATE_INTEGER_DIGITS_MAX}}(\\.[0-9]{1,${RATE_FRACTION_DIGITS_MAX}})?$`,
  description: `Units of \`to\` for one unit of \`from\`: a positive decimal string, at most ${RATE_FRACTION_DIGITS_MAX} decimals.`,
  examples: ['0.0077'],
} as const;

export const conversionRatesSchema = {
  $id: 'ConversionRates',
  type: 'object',
  description:
    'The organization’s conversion rates between fiat currencies and stablecoins, each direction its own.',
  required: ['object', 'data'],
  properties: {
    object: { type: 'string', enum: ['conversion_rates'] },
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['from', 'to', 'rate', 'version', 'updated_at'],
        properties: {
          from: { type: 'string', enum: SUPPORTED_CURRENCIES },
          to: { type: 'string', enum: SUPPORTED_CURRENCIES },
          rate: rateText,
          version: {
            type: ['string', 'null'],
            description:
              'The rate version in force (`crv_…`): every change of a pair’s rate is a new version, with the rate it replaced and who set it (evidence `conversion.rates.update`). Null for a rate set before rates had versions.',
          },
          updated_at: timestampSchema,
        },
      },
    },
  },
} as const;

const conversionFields = {
  direction: {
    type: 'string',
    enum: CONVERSION_DIRECTIONS,
    description: '`mint`: fiat to stablecoin; `redeem`: stablecoin to fiat.',
  },
  from_wallet: idSchema(ID_PREFIXES.wallet, 'The wallet debited.'),
  to_wallet: idSchema(ID_PREFIXES.wallet, 'The wallet credited.'),
  from_amount: amountField('Debited, in the source wallet’s currency.'),
  from_currency: { type: 'string' },
  to_amount: amountField(
    'Credited, in the destination wallet’s currency: from_amount × rate, rounded down to the minor unit.',
  ),
  to_currency: { type: 'string' },
  rate: { type: 'string', description: 'Units of to_currency for one of from_currency, exact.' },
  rate_version: {
    type: ['string', 'null'],
    description:
      'The rate version the quote was given at (`crv_…`, see `GET /v1/conversion-rates`); null for a quote given before rates had versions.',
  },
  fee: amountField(
    'The fee, in the source currency, paid on top of from_amount: what the fee schedule’s `conversion` rule for the source currency charges (zero without one).',
  ),
  total: amountField('What the source wallet is debited: from_amount + fee.'),
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
    conversion: { type: ['string', 'null'], description: 'The conversion that executed it.' },
    ...conversionFields,
    expires_at: timestampSchema,
  },
} as const;

export const conversionSchema = {
  $id: 'Conversion',
  type: 'object',
  description:
    'A quote executed: the source wallet debited and the destination wallet credited in one transaction, through the organization’s conversion accounts (two journal entries, one per currency, each balanced).',
  required: ['object', 'id', 'quote', 'journal_entries', ...Object.keys(conversionFields)],
  properties: {
    object: { type: 'string', enum: ['conversion'] },
    id: idSchema(ID_PREFIXES.conversion, 'Conversion id.'),
    quote: idSchema(ID_PREFIXES.conversionQuote, 'The quote executed.'),
    journal_entries: {
      type: 'array',
      items: { type: 'string' },
      description: 'The entry in the source currency, then the one in the destination currency.',
    },
    ...conversionFields,
  },
} as const;

export const STABLECOIN_SCHEMAS = [
  depositAddressSchema,
  depositSchema,
  conversionRatesSchema,
  conversionQuoteSchema,
  conversionSchema,
];

export function presentDepositAddress(a: DepositAddress) {
  return {
    object: 'deposit_address',
    id: a.id,
    wallet: a.walletId,
    asset: a.asset,
    network: a.network,
    address: a.address,
    created_at: a.createdAt.toISOString(),
  };
}

export function presentDeposit(d: Deposit) {
  return {
    object: 'deposit',
    id: d.id,
    wallet: d.walletId,
    deposit_address: d.depositAddressId,
    amount: formatAmount(d.amountMinor, d.asset),
    currency: d.asset,
    network: d.network,
    address: d.address,
    tx_hash: d.txHash,
    log_index: d.logIndex,
    confirmations: d.confirmations,
    required_confirmations: d.requiredConfirmations,
    chain_state: d.chainState,
    status: d.status,
    transfer: d.transferId,
    travel_rule:
      d.travelRuleEvidenceId === null
        ? null
        : {
            reference: d.travelRuleEvidenceId,
            required: d.travelRuleRequired === true,
            received: d.travelRuleReceived === true,
          },
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    credited_at: d.creditedAt?.toISOString() ?? null,
    reorged_at: d.reorgedAt?.toISOString() ?? null,
    held_at: d.heldAt?.toISOString() ?? null,
    rejected_at: d.rejectedAt?.toISOString() ?? null,
  };
}

function conversionCommon(c: ConversionQuote | Conversion) {
  return {
    direction: c.direction,
    from_wallet: c.fromWalletId,
    to_wallet: c.toWalletId,
    from_amount: formatAmount(c.fromAmountMinor, c.fromCurrency),
    from_currency: c.fromCurrency,
    to_amount: formatAmount(c.toAmountMinor, c.toCurrency),
    to_currency: c.toCurrency,
    rate: c.rate,
    rate_version: c.rateVersionId,
    fee: formatAmount(c.feeMinor, c.fromCurrency),
    total: formatAmount(c.fromAmountMinor + c.feeMinor, c.fromCurrency),
    fee_schedule: c.feeScheduleVersion === null ? null : { version: c.feeScheduleVersion, rule: c.feeRule },
    created_at: c.createdAt.toISOString(),
  };
}

export function presentQuote(q: ConversionQuote) {
  return {
    object: 'conversion_quote',
    id: q.id,
    status: q.status,
    conversion: q.conversionId,
    ...conversionCommon(q),
    expires_at: q.expiresAt.toISOString(),
  };
}

export function presentConversion(c: Conversion) {
  return {
    object: 'conversion',
    id: c.id,
    quote: c.quoteId,
    journal_entries: [c.debitEntryId, c.creditEntryId],
    ...conversionCommon(c),
  };
}

function presentRates(rates: StoredConversionRate[]) {
  return {
    object: 'conversion_rates',
    data: rates.map((r) => ({
      from: r.from,
      to: r.to,
      rate: r.rate,
      version: r.versionId,
      updated_at: r.updatedAt.toISOString(),
    })),
  };
}

export function stablecoinRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { network: DigitalAssetNetwork } }>(
    '/v1/wallets/:id/deposit-addresses',
    {
      config: { scope: 'write', product: 'stablecoins' },
      schema: {
        operationId: 'createDepositAddress',
        summary: 'Get a deposit address',
        description:
          'The wallet’s address on the network, issued on the first request (201) and the same one after (200). The wallet must hold USDC or USDT, and its asset’s route on the network must be enabled (422 `route_not_approved`). In the sandbox the address lives on the simulated chain; in production there is no custody provider yet, so this is a 422 `custody_not_configured`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: idParamsSchema(ID_PREFIXES.wallet, 'Wallet id.'),
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['network'],
          properties: { network: { type: 'string', enum: DIGITAL_ASSET_NETWORKS } },
        },
        response: {
          200: {
            description: 'The address already issued.',
            headers: idempotentWriteHeaders,
            $ref: 'DepositAddress#',
          },
          201: {
            description: 'The address, issued now.',
            headers: idempotentWriteHeaders,
            $ref: 'DepositAddress#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(
        deps,
        request,
        reply,
        async (tx, organizationId) => {
          const { address, created } = await issueDepositAddress(
            tx,
            deps,
            organizationId,
            request.params.id,
            request.body.network,
          );
          return { status: created ? 201 : 200, body: presentDepositAddress(address) };
        },
        (organizationId) =>
          prepareDepositAddress(deps, organizationId, request.params.id, request.body.network),
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/wallets/:id/deposit-addresses',
    {
      config: { scope: 'read', product: 'stablecoins' },
      schema: {
        operationId: 'listDepositAddresses',
        summary: 'List a wallet’s deposit addresses',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.wallet, 'Wallet id.'),
        response: {
          200: {
            description: 'Every address issued for the wallet, oldest first.',
            type: 'object',
            required: ['object', 'data'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'DepositAddress#' } },
            },
          },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) => ({
      object: 'list',
      data: (await walletDepositAddresses(deps, principalOf(request).organizationId, request.params.id)).map(
        presentDepositAddress,
      ),
    }),
  );

  app.get<{ Querystring: ListQuery & { status?: DepositStatus; wallet?: string } }>(
    '/v1/deposits',
    {
      config: { scope: 'read', product: 'stablecoins' },
      schema: {
        operationId: 'listDeposits',
        summary: 'List deposits',
        description: 'Newest first.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.deposit, {
          status: { type: 'string', enum: DEPOSIT_STATUSES, description: 'Only deposits in this status.' },
          wallet: idSchema(ID_PREFIXES.wallet, 'Only deposits to this wallet.'),
        }),
        response: {
          200: listEnvelopeSchema('Deposit', 'A page of deposits.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listOrganizationDeposits(deps, principalOf(request).organizationId, {
          ...pageRequestOf(request.query),
          status: request.query.status,
          walletId: request.query.wallet,
        }),
        presentDeposit,
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/deposits/:id',
    {
      config: { scope: 'read', product: 'stablecoins' },
      schema: {
        operationId: 'getDeposit',
        summary: 'Retrieve a deposit',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.deposit, 'Deposit id.'),
        response: {
          200: { description: 'The deposit.', $ref: 'Deposit#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentDeposit(await getDeposit(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.get(
    '/v1/conversion-rates',
    {
      config: { scope: 'read', product: 'stablecoins' },
      schema: {
        operationId: 'getConversionRates',
        summary: 'Retrieve the conversion rates',
        description:
          'The rates quotes use. The sandbox starts with USD one to one with USDC and USDT and KES at 0.0077 (128.5 back); production starts with none.',
        tags: TAGS,
        security: BEARER_SECURITY,
        response: {
          200: { description: 'The rates.', $ref: 'ConversionRates#' },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => presentRates(await getConversionRates(deps, principalOf(request).organizationId)),
  );

  app.put<{ Body: { rates: { from: string; to: string; rate: string }[] } }>(
    '/v1/conversion-rates',
    {
      config: { scope: 'compliance', product: 'stablecoins' },
      schema: {
        operationId: 'setConversionRates',
        summary: 'Replace the conversion rates',
        description:
          'Replaces the table whole: each entry converts between a fiat currency and a stablecoin, one way; the other way is its own entry (so the two may differ by a spread). Each pair whose rate changes gets a new rate version (the rate it replaced, who set it), recorded as evidence (`conversion.rates.update`, before and after); applies to the next quote, and a quote already given is executed only while its output is within the band of the rate in force. A rate moving more than the band (MKOBA_CONVERSION_RATE_BAND_BPS, 5 % by default) from the rate in force, or a pair’s first rate (outside the sandbox, or in the sandbox for a pair that had a rate before), needs a second member’s approval: a 202 with the pending change (rule `conversion_rate_band`), nothing changed until another `admin` or `compliance` member approves it (docs/APPROVALS.md). Removing a pair needs none. Needs the `compliance` scope.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['rates'],
          properties: {
            rates: {
              type: 'array',
              maxItems: CONVERSION_RATES_MAX,
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['from', 'to', 'rate'],
                properties: {
                  from: { type: 'string', description: 'A currency code.' },
                  to: { type: 'string', description: 'A currency code.' },
                  rate: { type: 'string', description: rateText.description, examples: rateText.examples },
                },
              },
            },
          },
        },
        response: {
          200: { description: 'The rates.', headers: idempotentWriteHeaders, $ref: 'ConversionRates#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          { kind: 'conversion_rate', action: 'set', targetId: null, payload: request.body },
          async () => ({
            status: 200,
            body: presentRates(
              await putConversionRates(tx, deps, organizationId, request.body, requestActor(request)),
            ),
          }),
        ),
      ),
  );

  app.post<{ Body: QuoteInput }>(
    '/v1/conversions/quote',
    {
      config: { scope: 'write', product: 'stablecoins' },
      schema: {
        operationId: 'createConversionQuote',
        summary: 'Quote a conversion',
        description: `Quotes converting \`amount\` (in the source wallet’s currency) from one of a customer’s wallets to another of theirs: fiat to USDC or USDT (mint) or back (redeem), at the organization’s rate, the credited amount rounded down to the minor unit, with the fee the organization’s fee schedule charges conversions from the source currency (rail \`conversion\`) on top. Valid for ${CONVERSION_QUOTE_TTL_MS / 1000} seconds. A pair without a rate is a 422 \`rate_unavailable\`.`,
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['from_wallet', 'to_wallet', 'amount'],
          properties: {
            from_wallet: idSchema(ID_PREFIXES.wallet, 'The wallet to debit.'),
            to_wallet: idSchema(ID_PREFIXES.wallet, 'The wallet to credit; the same customer’s.'),
            amount: {
              type: ['string', 'number'],
              description:
                'To debit, a decimal string in the source wallet’s currency (a JSON number is read exactly).',
            },
          },
        },
        response: {
          201: { description: 'The quote.', headers: idempotentWriteHeaders, $ref: 'ConversionQuote#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite<FeeSchedule>(
        deps,
        request,
        reply,
        async (tx, organizationId, fees) => ({
          status: 201,
          body: presentQuote(
            await createQuote(
              tx,
              deps,
              organizationId,
              request.body,
              fees,
              numberSourceOf(request.body, 'amount'),
            ),
          ),
        }),
        (organizationId) => prepareQuote(deps, organizationId),
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/conversions/quotes/:id',
    {
      config: { scope: 'read', product: 'stablecoins' },
      schema: {
        operationId: 'getConversionQuote',
        summary: 'Retrieve a quote',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.conversionQuote, 'Quote id.'),
        response: {
          200: { description: 'The quote.', $ref: 'ConversionQuote#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentQuote(await getQuote(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.post<{ Body: { quote: string } }>(
    '/v1/conversions',
    {
      config: { scope: 'write', product: 'stablecoins' },
      schema: {
        operationId: 'createConversion',
        summary: 'Execute a quote',
        description:
          'Debits the source wallet (amount + fee) and credits the destination wallet by the quote’s amounts, in one transaction through the posting module, the fee to fee income. Decided as a transfer of the source amount is: the customer’s tier limits (a 422 `limit_exceeded` on `quote`, with `limit` and `remaining`) and the AML rules (`block` or `review`: a 422 `compliance_blocked`, its evidence and alerts recorded). Once per quote: a quote already executed is a 409; an expired one a 422 `quote_expired`; one whose credited amount is more than the band (5 % by default) from what the rate in force now gives a 422 `rate_out_of_band` (ask for a new quote), and one whose pair has no rate any more a 422 `rate_unavailable`; a source wallet without amount + fee available a 422 `insufficient_funds`; a frozen or closed one a 409 `wallet_not_active`. Nothing moves on a refusal.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['quote'],
          properties: { quote: idSchema(ID_PREFIXES.conversionQuote, 'The quote to execute.') },
        },
        response: {
          201: { description: 'The conversion.', headers: idempotentWriteHeaders, $ref: 'Conversion#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite<AmlRule[]>(
        deps,
        request,
        reply,
        async (tx, organizationId, amlRules) => {
          const outcome = await executeQuote(
            tx,
            deps,
            organizationId,
            request.body.quote,
            actorIdOf(principalOf(request)),
            amlRules,
          );
          // A refusal by compliance commits its evidence and alerts, and is answered as the failure it is.
          return 'refused' in outcome
            ? failureResult(outcome.refused, request.id)
            : { status: 201, body: presentConversion(outcome.conversion) };
        },
        (organizationId) => prepareConversion(deps, organizationId),
      ),
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/conversions',
    {
      config: { scope: 'read', product: 'stablecoins' },
      schema: {
        operationId: 'listConversions',
        summary: 'List conversions',
        description: 'Newest first.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.conversion),
        response: {
          200: listEnvelopeSchema('Conversion', 'A page of conversions.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listOrganizationConversions(
          deps,
          principalOf(request).organizationId,
          pageRequestOf(request.query),
        ),
        presentConversion,
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/conversions/:id',
    {
      config: { scope: 'read', product: 'stablecoins' },
      schema: {
        operationId: 'getConversion',
        summary: 'Retrieve a conversion',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.conversion, 'Conversion id.'),
        response: {
          200: { description: 'The conversion.', $ref: 'Conversion#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentConversion(await getConversion(deps, principalOf(request).organizationId, request.params.id)),
  );
}
