/** Sandbox-only routes to fund wallets and drive transfers. Not registered in production. */
import type { FastifyInstance } from 'fastify';
import { sandboxFunding } from '../../app/collections.ts';
import type { Deps } from '../../app/deps.ts';
import {
  SANDBOX_STATEMENT_MISMATCHES,
  type SandboxStatementInput,
  sandboxStatement,
} from '../../app/reconciliation.ts';
import { applyStatusChange, lockTransfer } from '../../app/transfers.ts';
import { ID_PREFIXES, type IdPrefix } from '../../domain/ids.ts';
import { numberSourceOf } from '../../domain/jsonNumbers.ts';
import { RAILS, type TransferStatus } from '../../domain/transfers.ts';
import { BEARER_SECURITY } from '../auth.ts';
import { presentTransfer } from '../presenters.ts';
import { problemResponses, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  metadataSchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Sandbox'];
const FAILURE_CODE_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
const idParams = (prefix: IdPrefix, description: string) => idParamsSchema(prefix, description);
const transferResponse = {
  description: 'The transfer after the change.',
  headers: idempotentWriteHeaders,
  $ref: 'Transfer#',
};

export function sandboxRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { amount: string | number; metadata?: Record<string, string> } }>(
    '/v1/sandbox/wallets/:id/fund',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'sandboxFundWallet',
        summary: 'Fund a wallet (sandbox)',
        description:
          'Credits the wallet through a simulated mobile-money collection: a settled inbound transfer whose journal entry debits the rail settlement account. For a frozen wallet the collection is held `in_review` (credited only as pending) with a `frozen_wallet` review case.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: idParams(ID_PREFIXES.wallet, 'Wallet id.'),
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['amount'],
          properties: {
            amount: {
              type: ['string', 'number'],
              description: 'Decimal string at the wallet currency exponent.',
            },
            metadata: metadataSchema,
          },
        },
        response: {
          201: { description: 'The inbound transfer.', headers: idempotentWriteHeaders, $ref: 'Transfer#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 201,
        body: presentTransfer(
          await sandboxFunding(
            tx,
            deps,
            organizationId,
            request.params.id,
            request.body.amount,
            request.body.metadata ?? {},
            numberSourceOf(request.body, 'amount'),
          ),
        ),
      })),
  );

  const drive = (
    action: 'settle' | 'fail' | 'return',
    to: TransferStatus,
    summary: string,
    description: string,
  ) =>
    app.post<{ Params: { id: string }; Body: { failure_code?: string } | undefined }>(
      `/v1/sandbox/transfers/:id/${action}`,
      {
        config: { scope: 'write' },
        schema: {
          operationId: `sandbox${action[0]?.toUpperCase()}${action.slice(1)}Transfer`,
          summary,
          description,
          tags: TAGS,
          security: BEARER_SECURITY,
          headers: idempotencyHeadersSchema,
          params: idParams(ID_PREFIXES.transfer, 'Transfer id.'),
          ...(action === 'fail'
            ? {
                body: {
                  type: ['object', 'null'],
                  additionalProperties: false,
                  properties: {
                    failure_code: {
                      type: 'string',
                      pattern: FAILURE_CODE_PATTERN,
                      description:
                        'The failure code to record (snake_case); default `sandbox_forced_failure`.',
                    },
                  },
                },
              }
            : {}),
          response: { 200: transferResponse, ...problemResponses(...WRITE_PROBLEMS) },
        },
      },
      (request, reply) =>
        sendWrite(deps, request, reply, async (tx, organizationId) => {
          const transfer = await lockTransfer(tx, organizationId, request.params.id);
          const failureCode =
            action === 'fail' ? (request.body?.failure_code ?? 'sandbox_forced_failure') : undefined;
          const reason = `sandbox_${action}`;
          return {
            status: 200,
            body: presentTransfer(await applyStatusChange(tx, deps, transfer, { to, failureCode, reason })),
          };
        }),
    );

  drive(
    'settle',
    'settled',
    'Settle a transfer (sandbox)',
    'Posts the hold as if the rail confirmed payment. From `pending` or `processing`.',
  );
  drive(
    'fail',
    'failed',
    'Fail a transfer (sandbox)',
    'Releases the hold as if the rail refused the payment. From `pending` or `processing`.',
  );
  drive(
    'return',
    'returned',
    'Return a transfer (sandbox)',
    'Reverses a `settled` transfer as if the recipient side sent it back. For a wallet-to-wallet transfer the money comes out of the destination wallet: a 422 `insufficient_funds` when it no longer has it available.',
  );

  app.post<{ Body: SandboxStatementInput }>(
    '/v1/sandbox/statements',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'createSandboxStatement',
        summary: 'Produce a rail statement (sandbox)',
        description:
          'The sandbox rail’s settlement statement for a period: a line per payout it carried, whatever the ledger has matched since (one it left processing, the time-out number, and one returned later are reported settled; one refused before it reached the partner, with no rail reference, is not on it), ready to import with `POST /v1/reconciliation/statements`. `mismatches` adds deliberate differences, each applied to the next payout in turn: `amount` (one minor unit more), `fee` (a fee), `status` (a settled payout reported failed), `omit` (left out), `no_reference` (no rail reference: matched by amount and date), `unknown` (a line for a payout the ledger never made).',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          required: ['rail', 'from', 'to'],
          additionalProperties: false,
          properties: {
            rail: { type: 'string', enum: RAILS },
            from: { type: 'string', description: 'YYYY-MM-DD' },
            to: { type: 'string', description: 'YYYY-MM-DD' },
            mismatches: {
              type: 'array',
              maxItems: 20,
              items: { type: 'string', enum: SANDBOX_STATEMENT_MISMATCHES },
            },
          },
        },
        response: {
          200: {
            description: 'The statement, in the form the import takes.',
            headers: idempotentWriteHeaders,
            type: 'object',
            required: ['object', 'rail', 'from', 'to', 'lines'],
            properties: {
              object: { type: 'string', enum: ['statement'] },
              rail: { type: 'string' },
              from: { type: 'string' },
              to: { type: 'string' },
              lines: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    rail_reference: { type: ['string', 'null'] },
                    amount: { type: 'string' },
                    currency: { type: 'string' },
                    value_date: { type: 'string' },
                    status: { type: 'string' },
                    fees: { type: 'string' },
                  },
                },
              },
            },
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: await sandboxStatement(tx, organizationId, request.body),
      })),
  );
}
