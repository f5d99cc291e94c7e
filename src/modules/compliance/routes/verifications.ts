/** Verifications: submitted, listed and read, operators' decisions on them, and a customer's risk override. */

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { RISK_LEVELS, RISK_OVERRIDE_REASON_LENGTH_MAX, type RiskLevel } from '../../../domain/risk.ts';
import {
  checkSubmission,
  VERIFICATION_REASONS,
  type VerificationReason,
  type VerificationSubmission,
} from '../../../domain/verifications.ts';
import type { ListQuery } from '../../../http/presenters.ts';
import { foundById, retrieveByIdRoute, retrievePageOfId } from '../../../http/readRoutes.ts';
import { changeByIdFrom } from '../../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
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
  writeRoute<{ Params: { id: string }; Body: { reason?: VerificationReason } }>(
    app,
    deps,
    'POST',
    `/v1/verifications/:id/${decision.path}`,
    200,
    changeByIdFrom(
      deps,
      (body: { reason?: VerificationReason }) =>
        decision.status === 'verified'
          ? { status: 'verified' as const }
          : { status: decision.status, reason: body?.reason ?? 'other' },
      decideVerificationByOperator,
      presentVerification,
    ),
    {
      ...ACCESS.compliance,
      operationId: `${decision.path === 'request_documents' ? 'requestVerificationDocuments' : `${decision.path}Verification`}`,
      summary: decision.summary,
      description: `An operator's decision on a pending verification (the \`compliance\` scope): it becomes \`${decision.status}\`, and so does the customer's \`kyc_status\`. Recorded as evidence. A decided verification, or one held by an open screening review, is a 409.`,
      body: needsReason
        ? closedObjectSchema({ reason: { type: 'string', enum: VERIFICATION_REASONS } }, ['reason'])
        : closedObjectSchema({}, []),
      ...writtenById(verificationParams, 'Verification', 'The verification.'),
    },
  );
}

type RiskOverrideBody = { risk_level: RiskLevel; reason: string };

function overrideCustomerRiskRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Params: { id: string }; Body: RiskOverrideBody }>(
    app,
    deps,
    'POST',
    '/v1/customers/:id/risk',
    200,
    changeByIdFrom(
      deps,
      (body: RiskOverrideBody) => ({ level: body.risk_level, reason: body.reason }),
      setRiskOverride,
      presentCustomer,
    ),
    {
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
    },
  );
}

function clearCustomerRiskOverrideRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Params: { id: string }; Body: undefined }>(
    app,
    deps,
    'DELETE',
    '/v1/customers/:id/risk',
    200,
    // No override: the risk level is derived again.
    changeByIdFrom(deps, () => undefined, setRiskOverride, presentCustomer),
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
