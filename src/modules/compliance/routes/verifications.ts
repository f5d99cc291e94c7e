/** Verifications: submitted, listed and read, operators' decisions on them, and a customer's risk override. */

import type { FastifyInstance } from 'fastify';
import type { Deps, Queryable } from '../../../app/deps.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { RISK_LEVELS, RISK_OVERRIDE_REASON_LENGTH_MAX, type RiskLevel } from '../../../domain/risk.ts';
import {
  checkSubmission,
  VERIFICATION_REASONS,
  type VerificationReason,
  type VerificationSubmission,
} from '../../../domain/verifications.ts';
import { requestActor } from '../../../http/auth.ts';
import type { ListQuery } from '../../../http/presenters.ts';
import { foundById, retrieveByIdRoute, retrievePageOfId } from '../../../http/readRoutes.ts';
import { actOnId } from '../../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
  idempotentWrite,
  preparedWrite,
  readOperation,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { idParamsSchema, listEnvelopeSchema, listQuerySchema } from '../../../http/schemas.ts';
import { writeRoute, writtenById } from '../../../http/writeRoutes.ts';
import { getCustomer, presentCustomer } from '../../customers/index.ts';
import { setRiskOverride } from '../useCases/risk.ts';
import {
  decideVerificationByOperator,
  getVerification,
  listCustomerVerifications,
  screenSubmission,
  submitVerification,
} from '../useCases/verifications.ts';
import { presentVerification } from './presenters.ts';
import { textSchema, verificationSubmissionSchema } from './schemas.ts';

const ACCESS = accessByScope(['Verifications']);
/** The risk override is documented with the customer it changes. */
const RISK_ACCESS = accessByScope(['Customers']).compliance;
const customerParams = idParamsSchema(ID_PREFIXES.customer, 'Customer id.');
const verificationParams = idParamsSchema(ID_PREFIXES.verification, 'Verification id.');

/** An operator's decisions on a pending verification: the path, the status it gives, the summary. */
const OPERATOR_DECISIONS = [
  { path: 'approve', status: 'verified', summary: 'Approve a verification' },
  { path: 'reject', status: 'rejected', summary: 'Reject a verification' },
  { path: 'request_documents', status: 'documents_required', summary: 'Ask for documents' },
] as const;

type OperatorDecision = (typeof OPERATOR_DECISIONS)[number];

function submitVerificationRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: VerificationSubmission }>(
    '/v1/customers/:id/verifications',
    writeOperation({
      ...ACCESS.write,
      operationId: 'createVerification',
      summary: 'Submit a verification',
      description:
        'Submits identity data for KYC (individuals) or KYB (businesses). The names are screened against the sanctions list; in the sandbox a simulated provider decides by magic numbers (README), in production an operator decides. The customer’s `kyc_status` follows; `customer.verification.updated` is emitted. A customer with a verification pending gets a 409.',
      params: customerParams,
      body: verificationSubmissionSchema,
      responses: { 201: written('Verification', 'The verification.') },
    }),
    preparedWrite(
      deps,
      // Screened before the key's transaction opens: it reads the customer and the sanctions list.
      async (organizationId, request) => {
        const customer = await getCustomer(deps, organizationId, request.params.id);
        checkSubmission(request.body, customer.type, deps.now());
        return screenSubmission(deps, request.body);
      },
      async (tx, organizationId, request, screening) => ({
        status: 201,
        body: presentVerification(
          await submitVerification(tx, deps, organizationId, request.params.id, request.body, screening),
        ),
      }),
    ),
  );
}

function listVerificationsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string }; Querystring: ListQuery }>(
    '/v1/customers/:id/verifications',
    readOperation({
      ...ACCESS.read,
      operationId: 'listVerifications',
      summary: 'List a customer’s verifications',
      description: 'Newest first: the history of what was submitted and decided.',
      params: customerParams,
      querystring: listQuerySchema(ID_PREFIXES.verification),
      responses: { 200: listEnvelopeSchema('Verification', 'A page of verifications.') },
    }),
    retrievePageOfId(deps, listCustomerVerifications, presentVerification),
  );
}

function getVerificationRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/verifications/:id', getVerification, presentVerification, {
    ...ACCESS.read,
    operationId: 'getVerification',
    summary: 'Retrieve a verification',
    ...foundById(verificationParams, 'Verification', 'The verification.'),
  });
}

function decideVerificationRoute(app: FastifyInstance, deps: Deps, decision: OperatorDecision): void {
  const needsReason = decision.status !== 'verified';
  app.post<{ Params: { id: string }; Body: { reason?: VerificationReason } }>(
    `/v1/verifications/:id/${decision.path}`,
    writeOperation({
      ...ACCESS.compliance,
      operationId: `${decision.path === 'request_documents' ? 'requestVerificationDocuments' : `${decision.path}Verification`}`,
      summary: decision.summary,
      description: `An operator's decision on a pending verification (the \`compliance\` scope): it becomes \`${decision.status}\`, and so does the customer's \`kyc_status\`. Recorded as evidence. A decided verification, or one held by an open screening review, is a 409.`,
      body: needsReason
        ? closedObjectSchema({ reason: { type: 'string', enum: VERIFICATION_REASONS } }, ['reason'])
        : closedObjectSchema({}, []),
      ...writtenById(verificationParams, 'Verification', 'The verification.'),
    }),
    idempotentWrite(deps, 200, async (tx, organizationId, request) =>
      presentVerification(
        await decideVerificationByOperator(
          tx,
          deps,
          organizationId,
          request.params.id,
          decision.status === 'verified'
            ? { status: 'verified' }
            : { status: decision.status, reason: request.body?.reason ?? 'other' },
          requestActor(request),
        ),
      ),
    ),
  );
}

function overrideCustomerRiskRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { risk_level: RiskLevel; reason: string } }>(
    '/v1/customers/:id/risk',
    writeOperation({
      ...RISK_ACCESS,
      operationId: 'overrideCustomerRisk',
      summary: 'Override a customer’s risk level',
      description: 'An operator sets the risk level (the `compliance` scope); recorded as evidence.',
      body: closedObjectSchema(
        {
          risk_level: { type: 'string', enum: RISK_LEVELS },
          reason: textSchema(RISK_OVERRIDE_REASON_LENGTH_MAX),
        },
        ['risk_level', 'reason'],
      ),
      ...writtenById(customerParams, 'Customer', 'The customer.'),
    }),
    idempotentWrite(deps, 200, async (tx, organizationId, request) =>
      presentCustomer(
        await setRiskOverride(
          tx,
          deps,
          organizationId,
          request.params.id,
          { level: request.body.risk_level, reason: request.body.reason },
          requestActor(request),
        ),
      ),
    ),
  );
}

/** The customer's risk level derived again: its override set to none. */
function clearRiskOverride(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor,
) {
  return setRiskOverride(tx, deps, organizationId, id, undefined, actor);
}

function clearCustomerRiskOverrideRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Params: { id: string } }>(
    app,
    deps,
    'DELETE',
    '/v1/customers/:id/risk',
    200,
    actOnId(deps, clearRiskOverride, presentCustomer),
    {
      ...RISK_ACCESS,
      operationId: 'clearCustomerRiskOverride',
      summary: 'Clear a risk override',
      description: 'The risk level is derived again; recorded as evidence.',
      ...writtenById(customerParams, 'Customer', 'The customer.'),
    },
  );
}

/** Verifications (KYC and KYB), their operator decisions, and the risk override. */
export function verificationRoutes(app: FastifyInstance, deps: Deps): void {
  submitVerificationRoute(app, deps);
  listVerificationsRoute(app, deps);
  getVerificationRoute(app, deps);
  for (const decision of OPERATOR_DECISIONS) decideVerificationRoute(app, deps, decision);
  overrideCustomerRiskRoute(app, deps);
  clearCustomerRiskOverrideRoute(app, deps);
}
