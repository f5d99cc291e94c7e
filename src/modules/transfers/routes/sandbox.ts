/** Sandbox-only routes that drive transfers as if the rail had answered. Not registered in production. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import type { TransferStatus } from '../../../domain/transfers.ts';
import { presentTransfer } from '../../../http/presenters.ts';
import { idempotentWrite, SANDBOX_ACCESS, writeOperation, written } from '../../../http/routeKit.ts';
import { applyStatusChange, lockTransfer } from '../useCases/statusChanges.ts';
import { transferParams } from './schemas.ts';

const FAILURE_CODE_PATTERN = '^[a-z][a-z0-9_]{0,63}$';

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
      ...SANDBOX_ACCESS.write,
      operationId: `sandbox${action[0]?.toUpperCase()}${action.slice(1)}Transfer`,
      summary,
      description,
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

export function sandboxRoutes(app: FastifyInstance, deps: Deps): void {
  for (const change of DRIVEN_CHANGES) driveTransferRoute(app, deps, change);
}
