/**
 * Authorization: an organization's members and their roles; its authorization policy (rules held as data
 * and versioned, decided by the core's src/domain/decisions/policies.ts); approvals, voted on by members and
 * decided once, on any resource whose owner supplies its `ApprovableResource` (`deps.approvableResources`);
 * and governed changes, the one mechanism every sensitive setting goes through (`deps.changeKinds`, each
 * kind supplied by the module that owns the setting), with the expiry worker that closes approvals due.
 * Other modules, the composition root and the edges import this file only.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import type { HttpModule } from '../../http/httpModule.ts';
import { approvalRoutes } from './routes/approvals.ts';
import { changeRoutes, changeSchema } from './routes/changes.ts';
import { memberRoutes } from './routes/members.ts';
import { policyRoutes } from './routes/policies.ts';
import { AUTHORIZATION_SCHEMAS } from './routes/schemas.ts';

export { type Member, parseRoles } from './domain.ts';
export { insertApprovals } from './repository/approvals.ts';
export { eraseDecidedChangeCredentials } from './repository/governedChanges.ts';
export { findMember, findMemberByEmail } from './repository/members.ts';
export { findCurrentPolicy, findPolicyVersion } from './repository/policies.ts';
export {
  changeSchema,
  governedIdempotentWrite,
  governedWrite,
  governedWriteRoute,
  pendingChangeResponse,
  presentChange,
  proposedChangeOfId,
  proposedCreation,
  writtenOrPending,
} from './routes/changes.ts';
export { presentApproval } from './routes/presenters.ts';
export {
  approvalEvent,
  approvalEventData,
  cancelApprovalOf,
  getApproval,
  listApprovals,
  newApproval,
  openApproval,
  voteOnApproval,
  voterOf,
} from './useCases/approvals.ts';
export { GOVERNED_CHANGE_APPROVALS } from './useCases/governedChangeDecisions.ts';
export { proposeIfGoverned } from './useCases/governedChanges.ts';
export {
  addMember,
  addMemberToOrganization,
  listMembers,
  listMembersOfOrganization,
  removeMemberOfOrganization,
  updateMember,
} from './useCases/members.ts';
export { loadPolicy, POLICY_CHANGE_APPROVALS } from './useCases/policies.ts';
export { APPROVAL_EXPIRY_INTERVAL_MS, runApprovalExpiryOnce } from './workers/approvalExpiry.ts';

/** The module's face on the HTTP edge: members, policies, approvals and governed changes. */
export const authorizationHttp: HttpModule = {
  schemas: [...AUTHORIZATION_SCHEMAS, changeSchema],
  routes(app: FastifyInstance, deps: Deps) {
    memberRoutes(app, deps);
    policyRoutes(app, deps);
    approvalRoutes(app, deps);
    changeRoutes(app, deps);
  },
};
