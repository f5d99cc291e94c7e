/** Sandbox-only routes to fund wallets and drive transfers. Not registered in production. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { applyStatusChange, fundWallet, lockTransfer } from '../../app/transfers.ts';
import { ID_PREFIXES, type IdPrefix } from '../../domain/ids.ts';
import { numberSourceOf } from '../../domain/jsonNumbers.ts';
import type { TransferStatus } from '../../domain/transfers.ts';
import { BEARER_SECURITY } from '../auth.ts';
import { presentTransfer } from '../presenters.ts';
import { problemResponses, WRITE_PROBLEMS } from '../problems.ts';
import { idempotencyHeadersSchema, idempotentWriteHeaders, idSchema, metadataSchema } from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Sandbox'];
const FAILURE_CODE_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
const idParams = (prefix: IdPrefix, description: string) => ({
  type: 'object',
  required: ['id'],
  properties: { id: idSchema(prefix, description) },
});
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
          'Credits the wallet through a simulated mobile-money collection: a settled inbound transfer whose journal entry debits the rail settlement account.',
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
          await fundWallet(
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
}
