/**
 * Reversals of settled payouts through their rail partner (operators, `compliance` scope): asked for with a
 * reason under an Idempotency-Key (a governed change: waiting for approval when the policy says so), and read
 * back. The partner's result returns the transfer; until then the
 * transfer stays `settled`.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { principalOf, requestActor, requestActorId } from '../../../http/auth.ts';
import { foundById } from '../../../http/readRoutes.ts';
import { accessByScope, readOperation, writeOperation, written } from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { idParamsSchema } from '../../../http/schemas.ts';
import { governedIdempotentWrite, pendingChangeResponse } from '../../authorization/index.ts';
import { getReversalOfTransfer, REVERSAL_REASON_MAX_CHARS, requestReversal } from '../useCases/reversals.ts';

const ACCESS = accessByScope(['Transfers']);
const transferParams = idParamsSchema(ID_PREFIXES.transfer, 'The settled payout to reverse.');

function requestReversalRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { reason: string } }>(
    '/v1/transfers/:id/reverse',
    writeOperation({
      ...ACCESS.compliance,
      operationId: 'reverseTransfer',
      summary: 'Reverse a settled payout through its rail partner',
      description:
        'Asks the rail partner that paid a `settled` payout (M-Pesa through Daraja) to send it back. Answers the reversal `requested`; the reversal worker sends it, and the partner’s result either returns the transfer (`settled` → `returned`, one ledger return to the paying wallet, `transfer.returned`) or refuses it (`refused` with a `failure_code`; the transfer stays `settled`). Every change is a `rail_reversal.updated` event; who asked and why is evidence (`transfer.reversal`). One reversal per transfer: asking again answers the first. A `transfer_reversal` change the policy governs (in pilot and production the default rule does: a second admin) waits instead (202, a `change` with its approval) and is asked for once approved; its proposer cannot approve it. A transfer not `settled` is a 409 `invalid_state_transition`; one no partner of the organization can reverse (an internal transfer, another rail, a partner without reversals, a payout whose partner receipt is unknown) a 422 `reversal_not_supported`, param `id`.',
      params: transferParams,
      body: {
        type: 'object',
        required: ['reason'],
        additionalProperties: false,
        properties: {
          reason: {
            type: 'string',
            minLength: 1,
            maxLength: REVERSAL_REASON_MAX_CHARS,
            description: 'Why the payout is reversed (recorded with who asked).',
          },
        },
      },
      responses: {
        200: written('TransferReversal', 'The reversal, as asked for (or as it stands).'),
        202: pendingChangeResponse,
      },
    }),
    governedIdempotentWrite(
      deps,
      200,
      ({ params, body }) => ({
        kind: 'transfer_reversal',
        action: 'request',
        targetId: params.id,
        payload: { reason: body.reason.trim() },
      }),
      (tx, organizationId, request) =>
        requestReversal(tx, deps, {
          organizationId,
          transferId: request.params.id,
          reason: request.body.reason.trim(),
          actor: requestActor(request),
          actorId: requestActorId(request),
        }),
    ),
  );
}

function getReversalRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string } }>(
    '/v1/transfers/:id/reversal',
    readOperation({
      ...ACCESS.compliance,
      operationId: 'getTransferReversal',
      summary: 'Retrieve a payout’s reversal',
      ...foundById(transferParams, 'TransferReversal', 'The transfer’s reversal.'),
    }),
    async (request) => getReversalOfTransfer(deps, principalOf(request).organizationId, request.params.id),
  );
}

export const reversalRoutes = routesInOrder(requestReversalRoute, getReversalRoute);
