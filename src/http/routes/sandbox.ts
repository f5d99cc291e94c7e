/** Sandbox-only routes to fund wallets and drive transfers. Not registered in production. */
import type { FastifyInstance } from 'fastify';
import { sandboxFunding } from '../../app/collections.ts';
import type { Deps } from '../../app/deps.ts';
import {
  SANDBOX_STATEMENT_MISMATCHES,
  type SandboxStatementInput,
  sandboxStatement,
} from '../../app/reconciliation.ts';
import { applyStatusChange, lockTransfer } from '../../app/transferStatusChanges.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { numberSourceOf } from '../../domain/jsonNumbers.ts';
import { RAILS, type TransferStatus } from '../../domain/transfers.ts';
import { presentTransfer } from '../presenters.ts';
import { closedObjectSchema, idempotentWrite, writeOperation, written } from '../routeKit.ts';
import { idParamsSchema, metadataSchema } from '../schemas.ts';

const TAGS = ['Sandbox'];
const FAILURE_CODE_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
const transferParams = idParamsSchema(ID_PREFIXES.transfer, 'Transfer id.');

function fundWalletRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { amount: string | number; metadata?: Record<string, string> } }>(
    '/v1/sandbox/wallets/:id/fund',
    writeOperation({
      scope: 'write',
      operationId: 'sandboxFundWallet',
      summary: 'Fund a wallet (sandbox)',
      description:
        'Credits the wallet through a simulated mobile-money collection: a settled inbound transfer whose journal entry debits the rail settlement account. For a frozen wallet the collection is held `in_review` (credited only as pending) with a `frozen_wallet` review case.',
      tags: TAGS,
      params: idParamsSchema(ID_PREFIXES.wallet, 'Wallet id.'),
      body: closedObjectSchema(
        {
          amount: {
            type: ['string', 'number'],
            description: 'Decimal string at the wallet currency exponent.',
          },
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

/** A status change the sandbox drives as if the rail (or the recipient's side) had made it. */
interface DrivenChange {
  action: 'settle' | 'fail' | 'return';
  to: TransferStatus;
  summary: string;
  description: string;
}

const DRIVEN_CHANGES: readonly DrivenChange[] = [
  {
    action: 'settle',
    to: 'settled',
    summary: 'Settle a transfer (sandbox)',
    description: 'Posts the hold as if the rail confirmed payment. From `pending` or `processing`.',
  },
  {
    action: 'fail',
    to: 'failed',
    summary: 'Fail a transfer (sandbox)',
    description: 'Releases the hold as if the rail refused the payment. From `pending` or `processing`.',
  },
  {
    action: 'return',
    to: 'returned',
    summary: 'Return a transfer (sandbox)',
    description:
      'Reverses a `settled` transfer as if the recipient side sent it back. For a wallet-to-wallet transfer the money comes out of the destination wallet: a 422 `insufficient_funds` when it no longer has it available.',
  },
];

/** A forced failure's body: optional, with the failure code to record. */
const failBody = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    failure_code: {
      type: 'string',
      pattern: FAILURE_CODE_PATTERN,
      description: 'The failure code to record (snake_case); default `sandbox_forced_failure`.',
    },
  },
} as const;

function driveTransferRoute(
  app: FastifyInstance,
  deps: Deps,
  { action, to, summary, description }: DrivenChange,
) {
  app.post<{ Params: { id: string }; Body: { failure_code?: string } | undefined }>(
    `/v1/sandbox/transfers/:id/${action}`,
    writeOperation({
      scope: 'write',
      operationId: `sandbox${action[0]?.toUpperCase()}${action.slice(1)}Transfer`,
      summary,
      description,
      tags: TAGS,
      params: transferParams,
      ...(action === 'fail' ? { body: failBody } : {}),
      responses: { 200: written('Transfer', 'The transfer after the change.') },
    }),
    idempotentWrite(deps, 200, async (tx, organizationId, request) => {
      const transfer = await lockTransfer(tx, organizationId, request.params.id);
      const failureCode =
        action === 'fail' ? (request.body?.failure_code ?? 'sandbox_forced_failure') : undefined;
      const reason = `sandbox_${action}`;
      return presentTransfer(await applyStatusChange(tx, deps, transfer, { to, failureCode, reason }));
    }),
  );
}

const statementSchema = {
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
} as const;

function statementRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: SandboxStatementInput }>(
    '/v1/sandbox/statements',
    writeOperation({
      scope: 'read',
      operationId: 'createSandboxStatement',
      summary: 'Produce a rail statement (sandbox)',
      description:
        'The sandbox rail’s settlement statement for a period: a line per payout it carried, whatever the ledger has matched since (one it left processing, the time-out number, and one returned later are reported settled; one refused before it reached the partner, with no rail reference, is not on it), ready to import with `POST /v1/reconciliation/statements`. `mismatches` adds deliberate differences, each applied to the next payout in turn: `amount` (one minor unit more), `fee` (a fee), `status` (a settled payout reported failed), `omit` (left out), `no_reference` (no rail reference: matched by amount and date), `unknown` (a line for a payout the ledger never made).',
      tags: TAGS,
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
      responses: { 200: written(statementSchema, 'The statement, in the form the import takes.') },
    }),
    idempotentWrite(deps, 200, (tx, organizationId, request) =>
      sandboxStatement(tx, organizationId, request.body),
    ),
  );
}

export function sandboxRoutes(app: FastifyInstance, deps: Deps): void {
  fundWalletRoute(app, deps);
  for (const change of DRIVEN_CHANGES) driveTransferRoute(app, deps, change);
  statementRoute(app, deps);
}
