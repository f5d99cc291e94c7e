/**
 * Bank transfers in: how a wallet's virtual account reference (what a payer quotes) is shown (its routes are
 * the rail partners', railPartners/routes/walletAccountNumbers.ts), and the bank's report of the deposits it
 * received, imported by an operator.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { createFromRequest } from '../../../http/routeEffects.ts';
import { idempotentWrite, writeOperation, written } from '../../../http/routeKit.ts';
import { amountInputSchema, timestampSchema } from '../../../http/schemas.ts';
import { BANK_DEPOSITS_PER_REPORT_MAX, presentCollection } from '../../collections/index.ts';
import type { BankDepositOutcome, VirtualAccount } from '../useCases/bankDeposits.ts';
import {
  BANK_REFERENCE_LENGTH_MAX,
  type BankDepositInput,
  PAYER_NAME_LENGTH_MAX,
  recordBankDeposits,
} from '../useCases/bankDeposits.ts';

const TAGS = ['Collections'];
/** Characters of what a payer quoted: a virtual account reference or an account number, spaces and dashes included. */
const PAYER_REFERENCE_LENGTH_MAX = 64;

/** A wallet's virtual account; its routes are the rail partners' (a bank partner may issue an account number). */
export const virtualAccountResponse = {
  type: 'object',
  required: ['object', 'wallet', 'reference', 'created_at'],
  properties: {
    object: { type: 'string', enum: ['virtual_account'] },
    wallet: { type: 'string' },
    reference: {
      type: 'string',
      description:
        'What the payer quotes on a bank transfer: `MK`, 10 digits and 2 check digits (ISO 7064 mod 97-10), so a mistyped one is caught.',
    },
    created_at: timestampSchema,
  },
} as const;

export const presentVirtualAccount = (a: VirtualAccount) => ({
  object: 'virtual_account',
  wallet: a.walletId,
  reference: a.reference,
  created_at: a.createdAt.toISOString(),
});

const bankDepositReportBody = {
  type: 'object',
  required: ['deposits'],
  additionalProperties: false,
  properties: {
    deposits: {
      type: 'array',
      minItems: 1,
      maxItems: BANK_DEPOSITS_PER_REPORT_MAX,
      items: {
        type: 'object',
        required: ['bank_reference', 'reference', 'amount', 'currency'],
        additionalProperties: false,
        properties: {
          bank_reference: {
            type: 'string',
            minLength: 1,
            maxLength: BANK_REFERENCE_LENGTH_MAX,
            description: 'The bank’s own reference for the deposit: one deposit, one credit.',
          },
          reference: {
            type: 'string',
            maxLength: PAYER_REFERENCE_LENGTH_MAX,
            description:
              'What the payer quoted: the wallet’s virtual account reference (`MK…`) or its account number (12 digits); spaces and dashes are ignored.',
          },
          amount: amountInputSchema(),
          currency: { type: 'string' },
          payer_name: { type: 'string', maxLength: PAYER_NAME_LENGTH_MAX },
        },
      },
    },
  },
} as const;

const bankDepositReportSchema = {
  type: 'object',
  required: ['object', 'results'],
  properties: {
    object: { type: 'string', enum: ['bank_deposit_report'] },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['row', 'bank_reference', 'outcome'],
        properties: {
          row: { type: 'integer' },
          bank_reference: { type: 'string' },
          outcome: { type: 'string', enum: ['credited', 'duplicate', 'exception'] },
          collection: { $ref: 'Collection#' },
          exception: { type: 'string' },
          reason: { type: 'string' },
        },
      },
    },
  },
} as const;

/** What each deposit of a report did: its collection, or the exception it opened and why. */
function presentBankDepositReport(outcomes: readonly BankDepositOutcome[]) {
  return {
    object: 'bank_deposit_report',
    results: outcomes.map((o) =>
      o.outcome === 'exception'
        ? {
            row: o.row,
            bank_reference: o.bankReference,
            outcome: o.outcome,
            exception: o.exceptionId,
            reason: o.reason,
          }
        : {
            row: o.row,
            bank_reference: o.bankReference,
            outcome: o.outcome,
            collection: presentCollection(o.collection),
          },
    ),
  };
}

function recordBankDepositsRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: { deposits: BankDepositInput[] } }>(
    '/v1/bank-deposits',
    writeOperation({
      scope: 'compliance',
      operationId: 'recordBankDeposits',
      summary: 'Record deposits the bank reported',
      description: `For operators (the \`compliance\` scope): the bank's report of deposits to the organization's collection account, up to ${BANK_DEPOSITS_PER_REPORT_MAX} at a time, in one transaction. Each deposit naming a wallet's virtual account reference or its account number (a digital account's) credits that wallet (a \`bank_deposit\` collection with its inbound transfer, \`collection.succeeded\`); one whose \`bank_reference\` was recorded before is a \`duplicate\` and credits nothing; one naming no wallet that can take it (unknown or mistyped reference, another currency, a closed wallet) opens an \`unmatched_deposit\` reconciliation exception. A report with an invalid row is refused whole (422, each row named).`,
      tags: TAGS,
      body: bankDepositReportBody,
      responses: { 200: written(bankDepositReportSchema, 'What each deposit did, in the report’s order.') },
    }),
    idempotentWrite(
      deps,
      200,
      createFromRequest(deps, ({ body }) => body.deposits, recordBankDeposits, presentBankDepositReport),
    ),
  );
}

export function bankDepositRoutes(app: FastifyInstance, deps: Deps): void {
  recordBankDepositsRoute(app, deps);
}
