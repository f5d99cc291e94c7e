/** Governed changes: listed, read and canceled, and the governed write routes other modules' routes use. */
import type { FastifyInstance, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { ChangeRequest, Deps, Queryable, RegisteredChangeKind } from '../../../app/deps.ts';
import {
  GOVERNED_CHANGE_KINDS,
  GOVERNED_CHANGE_STATUSES,
  type GovernedChange,
  type GovernedChangeKind,
  type GovernedChangeStatus,
} from '../../../domain/governedChanges.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { requestActor } from '../../../http/auth.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import { enumFilter, foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import { actOnId } from '../../../http/routeEffects.ts';
import { accessByScope, idempotentOutcome, type OperationSpec, written } from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  idParamsSchema,
  idSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import { registerWrite, type WriteMethod, writeRoute, writtenById } from '../../../http/writeRoutes.ts';
import { cancelGovernedChange } from '../useCases/governedChangeDecisions.ts';
import { getGovernedChange, listChanges, proposeIfGoverned } from '../useCases/governedChanges.ts';

const ACCESS = accessByScope(['Changes']);
const changeParams = idParamsSchema(ID_PREFIXES.governedChange, 'Change id.');

/** A stored payload as shown: sealed secrets (rail credentials, a waiting key's hash) are named, never shown. */
function shownPayload(payload: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...payload };
  for (const [name, value] of Object.entries(payload)) {
    if (value && typeof value === 'object' && typeof (value as { sealed?: unknown }).sealed === 'string') {
      shown[name] = '[sealed]';
    }
  }
  return shown;
}

export function presentChange(change: GovernedChange) {
  return {
    object: 'change',
    id: change.id,
    kind: change.kind,
    action: change.action,
    target_id: change.targetId,
    payload: shownPayload(change.payload),
    status: change.status,
    proposed_by: change.proposedBy,
    approval: change.approvalId,
    policy_version: change.policyVersion,
    rule: change.rule,
    failure: change.failure,
    created_at: change.createdAt.toISOString(),
    decided_at: isoOrNull(change.decidedAt),
    applied_at: isoOrNull(change.appliedAt),
  };
}

export const changeSchema = apiObjectSchema(
  'Change',
  'change',
  'A sensitive change (a role grant, an elevated key, a conversion rate, a fee schedule, an AML rule, a digital-asset route, a rail partner, a trust account, a launch-gate override) waiting for the approval a `change` rule of the policy asks for, and what became of it. The vote that approves it applies it, in the same transaction; its proposer never votes on it. See docs/APPROVALS.md.',
  {
    id: idSchema(ID_PREFIXES.governedChange, 'Change id.'),
    kind: { type: 'string', enum: GOVERNED_CHANGE_KINDS },
    action: {
      type: 'string',
      description: 'What it does: `add`, `update`, `create`, `set`, `close` or `override`.',
    },
    target_id: nullableStringSchema('The resource changed; for a creation, the new resource once applied.'),
    payload: {
      type: 'object',
      additionalProperties: true,
      description:
        'The request as proposed; secrets (rail partner credentials, a waiting key’s hash) show as `[sealed]`. A key waiting for approval shows its `key_id`, `display_prefix`, `scopes` and `description`, never the key.',
    },
    status: {
      type: 'string',
      enum: GOVERNED_CHANGE_STATUSES,
      description:
        '`pending`; `applied`; `failed` (approved, but no longer possible: see `failure`); `rejected`; `expired`; `canceled` by its proposer.',
    },
    proposed_by: { type: 'string', description: 'The member (or key) who proposed it.' },
    approval: nullableStringSchema('Its approval.'),
    policy_version: { type: 'integer' },
    rule: { type: 'string', description: 'The policy rule that asked for approval.' },
    failure: {
      type: ['object', 'null'],
      required: ['code', 'detail'],
      properties: { code: { type: 'string' }, detail: { type: 'string' } },
    },
    created_at: timestampSchema,
    decided_at: nullableTimestampSchema,
    applied_at: nullableTimestampSchema,
  },
);

function changeReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/changes',
    access: ACCESS.read,
    present: presentChange,
    list: {
      operationId: 'listChanges',
      summary: 'List governed changes',
      description: 'Newest first: changes that waited for approval, with what became of them.',
      ...pagedList('Change', 'A page of changes.', ID_PREFIXES.governedChange, {
        status: enumFilter(GOVERNED_CHANGE_STATUSES, 'Only changes in this status.'),
        kind: enumFilter(GOVERNED_CHANGE_KINDS, 'Only changes of this kind.'),
      }),
    },
    page: listChanges,
    filtersOf: ({ status, kind }: { status?: GovernedChangeStatus; kind?: GovernedChangeKind }) => ({
      status,
      kind,
    }),
    retrieve: {
      operationId: 'getChange',
      summary: 'Retrieve a governed change',
      ...foundById(changeParams, 'Change', 'The change.'),
    },
    get: getGovernedChange,
  });
}

function cancelChangeRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Params: { id: string } }>(
    app,
    deps,
    'POST',
    '/v1/changes/:id/cancel',
    200,
    actOnId(deps, cancelGovernedChange, presentChange),
    {
      ...ACCESS.read,
      operationId: 'cancelChange',
      summary: 'Cancel a pending change',
      description:
        'Withdraws a pending change: its approval is canceled and the change is never made. Only its proposer may (403 `not_proposer`); a change no longer pending is a 409 `invalid_state_transition`.',
      ...writtenById(changeParams, 'Change', 'The change, canceled.'),
    },
  );
}

/**
 * Governed changes: anyone in the organization reads them (approvers need to see what they vote on, with
 * the `read` scope their role grants); only the proposer cancels one.
 */
export const changeRoutes = routesInOrder(changeReadRoutes, cancelChangeRoute);

/** The 202 a route answers when its change waits for approval. */
export function pendingChangeReply(change: GovernedChange) {
  return { status: 202 as const, body: presentChange(change) };
}

/** The 202 response of a route whose change may wait for approval, for its schema. */
export const pendingChangeResponse = written(
  'Change',
  'The change, waiting for the approval the policy asks for (see GET /v1/changes/{id}).',
);

/**
 * A route's write of a governed setting: proposed for approval when the policy asks (202 with the change),
 * else written now by `write`, as before.
 */
export async function governedWrite<T>(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  request: FastifyRequest,
  change: ChangeRequest,
  write: () => Promise<T>,
): Promise<T | { status: 202; body: ReturnType<typeof presentChange> }> {
  const pending = await proposeIfGoverned(tx, deps, organizationId, change, requestActor(request));
  if (pending) return pendingChangeReply(pending);
  return write();
}

/**
 * The handler of an idempotent write of a governed setting: the change `changeOf` names is proposed for
 * approval when the policy asks (202 with the change), else `effect` runs now and is answered with `status`.
 */
export function governedIdempotentWrite<Route extends RouteGenericInterface>(
  deps: Deps,
  status: number,
  changeOf: (request: FastifyRequest<Route>) => ChangeRequest,
  effect: (tx: Queryable, organizationId: string, request: FastifyRequest<Route>) => Promise<unknown>,
) {
  return idempotentOutcome<Route>(deps, (tx, organizationId, request) =>
    governedWrite(tx, deps, organizationId, request, changeOf(request), async () => ({
      status,
      body: await effect(tx, organizationId, request),
    })),
  );
}

/**
 * The route of an idempotent write of a governed change (`method` `path`): the change `changeOf` names is
 * proposed for approval when the policy asks (202 with the change), else `effect` runs now and is answered
 * with `status`; documented as `spec` says (`writtenOrPending` gives its responses).
 */
export function governedWriteRoute<Route extends RouteGenericInterface>(
  app: FastifyInstance,
  deps: Deps,
  method: WriteMethod,
  path: string,
  status: number,
  changeOf: (request: FastifyRequest<Route>) => ChangeRequest,
  effect: (tx: Queryable, organizationId: string, request: FastifyRequest<Route>) => Promise<unknown>,
  spec: OperationSpec,
): void {
  registerWrite(app, method, path, spec, governedIdempotentWrite(deps, status, changeOf, effect));
}

/** The responses of a governed write: `status` with the resource written (`schema`), or 202 with the change. */
export function writtenOrPending(status: 200 | 201, schema: string, description: string) {
  return { [status]: written(schema, description), 202: pendingChangeResponse };
}

/** The governed change of a creation: the request's body, proposed as `kind`'s `action` on no resource yet. */
export function proposedCreation(kind: RegisteredChangeKind, action: string) {
  return (request: { body: object }): ChangeRequest => ({
    kind,
    action,
    targetId: null,
    payload: request.body,
  });
}

/** The governed change of the resource the path's `:id` names: the request's body, as `kind`'s `action`. */
export function proposedChangeOfId(kind: RegisteredChangeKind, action: string) {
  return (request: { params: { id: string }; body: object }): ChangeRequest => ({
    kind,
    action,
    targetId: request.params.id,
    payload: request.body,
  });
}
