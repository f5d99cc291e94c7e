import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { decideReview, getReview, listReviews } from '../../app/reviews.ts';
import type { TravelRuleInput } from '../../domain/decisions/travelRule.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import {
  REVIEW_DECISIONS,
  REVIEW_KINDS,
  REVIEW_NOTE_LENGTH_MAX,
  REVIEW_STATUSES,
  type ReviewKind,
  type ReviewStatus,
} from '../../domain/reviews.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { presentReview } from '../compliancePresenters.ts';
import { type ListQuery, pageRequestOf, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  travelRuleRequestSchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Reviews'];
const reviewParams = idParamsSchema(ID_PREFIXES.review, 'Review id.');

/** The one queue of review cases (screening, AML, frozen wallets, held deposits): operators only (the `compliance` scope). */
export function reviewRoutes(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { status?: ReviewStatus; kind?: ReviewKind; transfer?: string } }>(
    '/v1/reviews',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'listReviews',
        summary: 'List review cases',
        description: 'Newest first. Filter `status=open` for the work queue.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.review, {
          status: { type: 'string', enum: REVIEW_STATUSES, description: 'Only cases in this status.' },
          kind: { type: 'string', enum: REVIEW_KINDS, description: 'Only cases of this kind.' },
          transfer: idSchema(ID_PREFIXES.transfer, 'Only the cases of this transfer.'),
        }),
        response: {
          200: listEnvelopeSchema('Review', 'A page of review cases.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const { status, kind, transfer } = request.query;
      const page = await listReviews(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        status,
        kind,
        transferId: transfer,
      });
      return presentList(page, presentReview);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/reviews/:id',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'getReview',
        summary: 'Retrieve a review case',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: reviewParams,
        response: {
          200: { description: 'The case.', $ref: 'Review#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentReview(await getReview(deps, principalOf(request).organizationId, request.params.id)),
  );

  for (const decision of REVIEW_DECISIONS) {
    app.post<{
      Params: { id: string };
      Body: { note?: string; freeze_wallet?: boolean; travel_rule?: TravelRuleInput };
    }>(
      `/v1/reviews/:id/${decision}`,
      {
        config: { scope: 'compliance' },
        schema: {
          operationId: decision === 'clear' ? 'clearReview' : 'rejectReview',
          summary: decision === 'clear' ? 'Clear a review case' : 'Reject a review case',
          description:
            decision === 'clear'
              ? 'The held transfer goes on: to the rail, or settled at once when it is internal. A held stablecoin deposit (a `travel_rule` case) needs `travel_rule.originator`, the data the sending institution supplied (without it a 422 `travel_rule_required`): it is kept as evidence and the deposit is credited (`deposit.credited`). A decided case is a 409 `invalid_state_transition`.'
              : 'The held transfer is rejected (`transfer.rejected`) and its hold released; a held stablecoin deposit is left uncredited, `rejected` and owed back to its sender (`deposit.rejected`). A screening case also freezes the paying wallet (`freeze_wallet` defaults to true for screening, false otherwise). A decided case is a 409 `invalid_state_transition`.',
          tags: TAGS,
          security: BEARER_SECURITY,
          headers: idempotencyHeadersSchema,
          params: reviewParams,
          body: {
            type: 'object',
            additionalProperties: false,
            properties: {
              note: {
                type: 'string',
                minLength: 1,
                maxLength: REVIEW_NOTE_LENGTH_MAX,
                description: 'Why; kept on the case and in the evidence.',
              },
              ...(decision === 'reject'
                ? {
                    freeze_wallet: {
                      type: 'boolean',
                      description:
                        'Freeze the paying wallet too (default: true for screening, false otherwise).',
                    },
                  }
                : {
                    travel_rule: {
                      ...travelRuleRequestSchema,
                      description:
                        'A held stablecoin deposit only (a `travel_rule` case): the originator’s data as the sending institution supplied it, checked like a deposit report’s (a 400 naming each field). The beneficiary defaults to the wallet’s customer.',
                    },
                  }),
            },
          },
          response: {
            200: { description: 'The decided case.', headers: idempotentWriteHeaders, $ref: 'Review#' },
            ...problemResponses(...WRITE_PROBLEMS),
          },
        },
      },
      (request, reply) =>
        sendWrite(deps, request, reply, async (tx, organizationId) => ({
          status: 200,
          body: presentReview(
            await decideReview(
              tx,
              deps,
              organizationId,
              request.params.id,
              decision,
              {
                note: request.body?.note,
                freezeWallet: request.body?.freeze_wallet,
                travelRule: request.body?.travel_rule,
              },
              requestActor(request),
            ),
          ),
        })),
    );
  }
}
