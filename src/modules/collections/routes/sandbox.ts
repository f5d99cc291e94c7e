/** The sandbox's route that funds a wallet as if a payer's money had been collected. Not registered in production. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import { presentTransfer } from '../../../http/presenters.ts';
import {
  closedObjectSchema,
  idempotentWrite,
  SANDBOX_ACCESS,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { amountInputSchema, metadataSchema } from '../../../http/schemas.ts';
import { walletParams } from '../../wallets/index.ts';
import { sandboxFunding } from '../useCases.ts';

export function sandboxFundingRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { amount: string | number; metadata?: Record<string, string> } }>(
    '/v1/sandbox/wallets/:id/fund',
    writeOperation({
      ...SANDBOX_ACCESS.write,
      operationId: 'sandboxFundWallet',
      summary: 'Fund a wallet (sandbox)',
      description:
        'Credits the wallet through a simulated mobile-money collection: a settled inbound transfer whose journal entry debits the rail settlement account. For a frozen wallet the collection is held `in_review` (credited only as pending) with a `frozen_wallet` review case.',
      params: walletParams,
      body: closedObjectSchema(
        {
          amount: amountInputSchema('Decimal string at the wallet currency exponent.'),
          metadata: metadataSchema,
        },
        ['amount'],
      ),
      responses: { 201: written('Transfer', 'The inbound transfer.') },
    }),
    idempotentWrite(deps, 201, async (tx, organizationId, request) =>
      presentTransfer(
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
    ),
  );
}
