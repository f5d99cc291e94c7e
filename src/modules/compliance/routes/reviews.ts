/** Review cases: listed and read, and the operator decisions that clear or reject them. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import type { TravelRuleInput } from '../../../domain/decisions/travelRule.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  REVIEW_DECISIONS,
  REVIEW_KINDS,
  REVIEW_NOTE_LENGTH_MAX,
  REVIEW_STATUSES,
  type ReviewDecision,
  type ReviewKind,
  type ReviewStatus,
} from '../../../domain/reviews.ts';
import { enumFilter, foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import { actionOnId } from '../../../http/routeEffects.ts';
import { accessByScope, closedObjectSchema } from '../../../http/routeKit.ts';
import { idParamsSchema, idSchema } from '../../../http/schemas.ts';
import { writeRoute, writtenById } from '../../../http/writeRoutes.ts';
import { decideReview, getReview, listReviews, type ReviewDecisionInput } from '../useCases/reviews.ts';
import { presentReview } from './presenters.ts';
import { textSchema } from './schemas.ts';
import { travelRuleRequestSchema } from './travelRuleSchemas.ts';

const ACCESS = accessByScope(['Reviews']);
const reviewParams = idParamsSchema(ID_PREFIXES.review, 'Review id.');

/** What each decision's operation says, and what its body takes besides the note. */
const DECISION_OPERATIONS = {
  clear: {
    operationId: 'clearReview',
    summary: 'Clear a review case',
    description:
      'The held transfer goes on: to the rail, or settled at once when it is internal. A held stablecoin deposit (a `travel_rule` case) needs `travel_rule.originator`, the data the sending institution supplied (without it a 422 `travel_rule_required`): it is kept as evidence and the deposit is credited (`deposit.credited`). A decided case is a 409 `invalid_state_transition`.',
    bodyProperties: {
      travel_rule: {
        ...travelRuleRequestSchema,
        description:
          'A held stablecoin deposit only (a `travel_rule` case): the originator’s data as the sending institution supplied it, checked like a deposit report’s (a 400 naming each field). The beneficiary defaults to the wallet’s customer.',
      },
    },
  },
  reject: {
    operationId: 'rejectReview',
    summary: 'Reject a review case',
    description:
      'The held transfer is rejected (`transfer.rejected`) and its hold released; a held stablecoin deposit is left uncredited, `rejected` and owed back to its sender (`deposit.rejected`). A screening case also freezes the paying wallet (`freeze_wallet` defaults to true for screening, false otherwise). A decided case is a 409 `invalid_state_transition`.',
    bodyProperties: {
      freeze_wallet: {
        type: 'boolean',
        description: 'Freeze the paying wallet too (default: true for screening, false otherwise).',
      },
    },
  },
} as const satisfies Record<ReviewDecision, object>;

function reviewReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/reviews',
    access: ACCESS.compliance,
    present: presentReview,
    list: {
      operationId: 'listReviews',
      summary: 'List review cases',
      description: 'Newest first. Filter `status=open` for the work queue.',
      ...pagedList('Review', 'A page of review cases.', ID_PREFIXES.review, {
        status: enumFilter(REVIEW_STATUSES, 'Only cases in this status.'),
        kind: enumFilter(REVIEW_KINDS, 'Only cases of this kind.'),
        transfer: idSchema(ID_PREFIXES.transfer, 'Only the cases of this transfer.'),
      }),
    },
    page: listReviews,
    filtersOf: ({
      status,
      kind,
      transfer,
    }: {
      status?: ReviewStatus;
      kind?: ReviewKind;
      transfer?: string;
    }) => ({
      status,
      kind,
      transferId: transfer,
    }),
    retrieve: {
      operationId: 'getReview',
      summary: 'Retrieve a review case',
      ...foundById(reviewParams, 'Review', 'The case.'),
    },
    get: getReview,
  });
}

/** The body of a decision, every field optional (a decision may come with no body at all). */
type DecisionBody = { note?: string; freeze_wallet?: boolean; travel_rule?: TravelRuleInput } | undefined;

function decisionInputOf(body: DecisionBody): ReviewDecisionInput {
  return { note: body?.note, freezeWallet: body?.freeze_wallet, travelRule: body?.travel_rule };
}

function decideReviewRoute(app: FastifyInstance, deps: Deps, decision: ReviewDecision): void {
  const { bodyProperties, ...operation } = DECISION_OPERATIONS[decision];
  writeRoute<{ Params: { id: string }; Body: DecisionBody }>(
    app,
    deps,
    'POST',
    `/v1/reviews/:id/${decision}`,
    200,
    actionOnId(deps, decision, decisionInputOf, decideReview, presentReview),
    {
      ...ACCESS.compliance,
      ...operation,
      body: closedObjectSchema({
        note: textSchema(REVIEW_NOTE_LENGTH_MAX, 'Why; kept on the case and in the evidence.'),
        ...bodyProperties,
      }),
      ...writtenById(reviewParams, 'Review', 'The decided case.'),
    },
  );
}

/** The one queue of review cases (screening, AML, frozen wallets, held deposits): operators only (the `compliance` scope). */
export function reviewRoutes(app: FastifyInstance, deps: Deps): void {
  reviewReadRoutes(app, deps);
  for (const decision of REVIEW_DECISIONS) decideReviewRoute(app, deps, decision);
}
