/**
 * `POST /v1/sandbox/bank-transfers`: a payer's bank transfer into a wallet's bank account number, sent
 * through the sandbox's Flutterwave simulator, so the credit arrives by its webhook and verification as
 * in production. Not registered in production.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import {
  closedObjectSchema,
  SANDBOX_ACCESS,
  sendingWrite,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import { amountInputSchema, currencySchema, decimalStringSchema, idSchema } from '../../../http/schemas.ts';
import {
  SANDBOX_SENDER_NAME_LENGTH_MAX,
  type SandboxBankTransfer,
  type SandboxBankTransferInput,
  sendSandboxBankTransfer,
} from '../useCases/sandboxBankTransfers.ts';

export const sandboxBankTransferSchema = apiObjectSchema(
  'SandboxBankTransfer',
  'sandbox_bank_transfer',
  'A bank transfer sent into a wallet’s bank account number through the sandbox’s bank partner simulator. The wallet is credited once the partner reports it (its webhook, then its verification), as in production: watch for the inbound transfer.',
  {
    partner: { type: 'string', description: 'The partner that carried it (`flutterwave`).' },
    partner_reference: {
      type: 'string',
      description: 'The partner’s id of the payment (Flutterwave’s charge id).',
    },
    wallet: idSchema(ID_PREFIXES.wallet, 'The wallet the account number is.'),
    account_number: { type: 'string' },
    amount: decimalStringSchema('Decimal string in `currency`.'),
    currency: currencySchema,
    sender_name: { type: ['string', 'null'] },
  },
);

const presentSandboxBankTransfer = (t: SandboxBankTransfer) => ({
  object: 'sandbox_bank_transfer',
  partner: t.partner,
  partner_reference: t.partnerReference,
  wallet: t.walletId,
  account_number: t.accountNumber,
  amount: t.amount,
  currency: t.currency,
  sender_name: t.senderName,
});

const body = closedObjectSchema(
  {
    wallet: idSchema(
      ID_PREFIXES.wallet,
      'The wallet paid into (its bank account number); or `account_number`.',
    ),
    account_number: {
      type: 'string',
      maxLength: 32,
      description: 'The bank account number paid into (`POST /v1/wallets/{id}/virtual-account` issued it).',
    },
    amount: amountInputSchema('Decimal string at the wallet currency exponent.'),
    currency: { type: 'string', maxLength: 8, description: 'The wallet’s currency.' },
    sender_name: { type: 'string', minLength: 1, maxLength: SANDBOX_SENDER_NAME_LENGTH_MAX },
  },
  ['amount', 'currency'],
);

export function sandboxBankTransferRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: SandboxBankTransferInput }>(
    '/v1/sandbox/bank-transfers',
    writeOperation({
      ...SANDBOX_ACCESS.write,
      operationId: 'sandboxBankTransfer',
      summary: 'Send a bank transfer into a wallet (sandbox)',
      description:
        'A payer’s bank transfer into a wallet’s bank account number (from `POST /v1/wallets/{id}/virtual-account`), sent through the sandbox’s Flutterwave simulator (202). Flutterwave’s `charge.completed` webhook and its verification then credit the wallet with an inbound transfer, as in production. A 409 `sandbox_simulators_off` when the sandbox runs without its partner simulators.',
      body,
      responses: { 202: written('SandboxBankTransfer', 'The transfer, handed to the partner.') },
    }),
    sendingWrite(
      deps,
      // The partner is called before the key's transaction (its webhook comes back to this service), once
      // the key is claimed.
      async (organizationId, request) =>
        sendSandboxBankTransfer(deps, organizationId, request.body, numberSourceOf(request.body, 'amount')),
      async (_tx, _organizationId, _request, sent) => ({
        status: 202,
        body: presentSandboxBankTransfer(sent),
      }),
    ),
  );
}
