/**
 * The authorization policy: the current version and every version read, the policy replaced (through an
 * approval when it asks for one), and the proposed changes that waited.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import type { Policy } from '../../../domain/decisions/policies.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { requestActor, requestActorId } from '../../../http/auth.ts';
import { type ListQuery, pageRequestOf, presentList } from '../../../http/presenters.ts';
import { pagedList } from '../../../http/readRoutes.ts';
import {
  accessByScope,
  found,
  idempotentOutcome,
  organizationOf,
  readOperation,
  written,
} from '../../../http/routeKit.ts';
import { idParamsSchema } from '../../../http/schemas.ts';
import {
  replaceSettingOperation,
  type VersionedSetting,
  versionedSettingReadRoutes,
} from '../../../http/versionedSettingRoutes.ts';
import {
  getCurrentPolicy,
  getPolicyChange,
  getPolicyVersion,
  latestApprovalIdOfChange,
  listChanges,
  listVersions,
  type PolicyChange,
  type PolicyUpdateInput,
  updatePolicy,
} from '../useCases/policies.ts';
import { presentPolicy, presentPolicyChange } from './presenters.ts';
import { policyBodySchema } from './schemas.ts';

const TAGS = ['Policies'];
const ACCESS = accessByScope(TAGS);

/** A policy change as shown, with the approval it last asked for. */
async function presentPolicyChangeOf(deps: Deps, organizationId: string, change: PolicyChange) {
  return presentPolicyChange(change, await latestApprovalIdOfChange(deps, organizationId, change.id));
}

/** The policy as its versions are read. */
const POLICY: VersionedSetting<Policy> = {
  path: '/v1/policies',
  tags: TAGS,
  schema: 'Policy',
  getCurrent: getCurrentPolicy,
  getVersion: getPolicyVersion,
  listVersions,
  present: presentPolicy,
  name: { operation: 'Policy', words: 'policy' },
  descriptions: {
    current:
      'The organization’s authorization policy as it stands: ordered rules and a default. Before any change it is version 1: no rules, every transfer allowed.',
    version: 'The version a decision names (`authorization.policy_version` on a transfer).',
  },
};

/** Applied at once (200), or waiting as a policy change for the approval the policy asks for (202). */
function updatePolicyRoute(app: FastifyInstance, deps: Deps): void {
  app.put<{ Body: PolicyUpdateInput }>(
    POLICY.path,
    replaceSettingOperation(POLICY, {
      description:
        'Writes the rules and default as the next version (200, `policy.updated`). When the current policy has a `policy.update` rule that requires approval, the change waits instead (202, a `policy_change` with its approval) and is applied once approved; its proposer cannot approve it. A `deny` rule on `policy.update` is a 422 `policy_denied`. Each rule is checked field by field: a fault is a 400 naming it (`rules[2].approval.quorum`).',
      body: policyBodySchema,
      responses: {
        200: written('Policy', 'The new version.'),
        202: written('PolicyChange', 'The change, waiting for its approval.'),
      },
    }),
    idempotentOutcome(deps, async (tx, organizationId, request) => {
      const result = await updatePolicy(
        tx,
        deps,
        organizationId,
        request.body,
        requestActorId(request),
        requestActor(request),
      );
      return result.kind === 'applied'
        ? { status: 200, body: presentPolicy(result.policy) }
        : { status: 202, body: presentPolicyChange(result.change, result.approval.id) };
    }),
  );
}

function listPolicyChangesRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery }>(
    '/v1/policy-changes',
    readOperation({
      ...ACCESS.read,
      operationId: 'listPolicyChanges',
      summary: 'List proposed policy changes',
      description: 'Newest first: changes that needed approval, with what became of them.',
      ...pagedList('PolicyChange', 'A page of policy changes.', ID_PREFIXES.policyChange),
    }),
    async (request) => {
      const organizationId = organizationOf(request);
      const page = await listChanges(deps, organizationId, pageRequestOf(request.query));
      // One change at a time, in the page's order: each looks up its latest approval.
      const shown = [];
      for (const change of page.data) {
        shown.push({ id: change.id, wire: await presentPolicyChangeOf(deps, organizationId, change) });
      }
      return presentList({ data: shown, hasMore: page.hasMore }, (item) => item.wire);
    },
  );
}

function getPolicyChangeRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string } }>(
    '/v1/policy-changes/:id',
    readOperation({
      ...ACCESS.read,
      operationId: 'getPolicyChange',
      summary: 'Retrieve a proposed policy change',
      params: idParamsSchema(ID_PREFIXES.policyChange, 'Policy change id.'),
      responses: { 200: found('PolicyChange', 'The change.') },
    }),
    async (request) => {
      const organizationId = organizationOf(request);
      const change = await getPolicyChange(deps, organizationId, request.params.id);
      return presentPolicyChangeOf(deps, organizationId, change);
    },
  );
}

/** The authorization policy: read by any key, changed by admins (through an approval when it says so). */
export function policyRoutes(app: FastifyInstance, deps: Deps): void {
  versionedSettingReadRoutes(app, deps, POLICY);
  updatePolicyRoute(app, deps);
  listPolicyChangesRoute(app, deps);
  getPolicyChangeRoute(app, deps);
}
