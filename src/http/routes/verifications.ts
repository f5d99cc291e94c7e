import type { FastifyInstance } from 'fastify';
import { getCustomer } from '../../app/customers.ts';
import type { Deps } from '../../app/deps.ts';
import { setRiskOverride } from '../../app/risk.ts';
import {
  decideVerificationByOperator,
  getVerification,
  listCustomerVerifications,
  type SubmissionScreening,
  screenSubmission,
  submitVerification,
} from '../../app/verifications.ts';
import { PHONE_PATTERN } from '../../domain/customers.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { RISK_LEVELS, RISK_OVERRIDE_REASON_LENGTH_MAX, type RiskLevel } from '../../domain/risk.ts';
import {
  BENEFICIAL_OWNERS_MAX,
  COUNTRY_PATTERN,
  checkSubmission,
  ID_NUMBER_PATTERN,
  LEGAL_NAME_LENGTH_MAX,
  NATIONAL_ID_TYPES,
  OWNERSHIP_BP_TOTAL,
  VERIFICATION_REASONS,
  type VerificationReason,
  type VerificationSubmission,
} from '../../domain/verifications.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { presentVerification } from '../compliancePresenters.ts';
import { type ListQuery, pageRequestOf, presentCustomer, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  listEnvelopeSchema,
  listQuerySchema,
  postalAddressSchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Verifications'];
const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';
const text = (maxLength: number, description?: string) => ({
  type: 'string',
  minLength: 1,
  maxLength,
  ...(description ? { description } : {}),
});
const nationalIdSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'number'],
  properties: {
    type: { type: 'string', enum: NATIONAL_ID_TYPES },
    number: {
      type: 'string',
      pattern: ID_NUMBER_PATTERN,
      description: 'Shown back masked to its last 4 characters.',
    },
  },
} as const;
const customerParams = idParamsSchema(ID_PREFIXES.customer, 'Customer id.');
const verificationParams = idParamsSchema(ID_PREFIXES.verification, 'Verification id.');

const submissionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'legal_name'],
  description:
    'An individual: `legal_name`, `date_of_birth`, `national_id`, `phone`, `address`. A business: `legal_name`, `registration_number`, `country`, `beneficial_owners` (every owner of 25 % or more; shares in basis points, at most 10,000 in all).',
  properties: {
    type: { type: 'string', enum: ['individual', 'business'], description: 'The customer’s type.' },
    legal_name: text(LEGAL_NAME_LENGTH_MAX),
    date_of_birth: { type: 'string', pattern: DATE_PATTERN, description: 'YYYY-MM-DD.' },
    national_id: nationalIdSchema,
    phone: { type: 'string', pattern: PHONE_PATTERN, description: 'E.164.' },
    address: postalAddressSchema,
    registration_number: { type: 'string', pattern: ID_NUMBER_PATTERN },
    country: {
      type: 'string',
      pattern: COUNTRY_PATTERN,
      description: 'ISO 3166-1 alpha-2: where it is registered.',
    },
    beneficial_owners: {
      type: 'array',
      minItems: 1,
      maxItems: BENEFICIAL_OWNERS_MAX,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'date_of_birth', 'national_id', 'ownership_bp'],
        properties: {
          name: text(LEGAL_NAME_LENGTH_MAX),
          date_of_birth: { type: 'string', pattern: DATE_PATTERN },
          national_id: nationalIdSchema,
          ownership_bp: { type: 'integer', minimum: 1, maximum: OWNERSHIP_BP_TOTAL },
        },
      },
    },
  },
} as const;

/** Verifications (KYC and KYB), their operator decisions, and the risk override. */
export function verificationRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: VerificationSubmission }>(
    '/v1/customers/:id/verifications',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'createVerification',
        summary: 'Submit a verification',
        description:
          'Submits identity data for KYC (individuals) or KYB (businesses). The names are screened against the sanctions list; in the sandbox a simulated provider decides by magic numbers (README), in production an operator decides. The customer’s `kyc_status` follows; `customer.verification.updated` is emitted. A customer with a verification pending gets a 409.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: customerParams,
        body: submissionSchema,
        response: {
          201: { description: 'The verification.', headers: idempotentWriteHeaders, $ref: 'Verification#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite<SubmissionScreening>(
        deps,
        request,
        reply,
        async (tx, organizationId, screening) => ({
          status: 201,
          body: presentVerification(
            await submitVerification(tx, deps, organizationId, request.params.id, request.body, screening),
          ),
        }),
        async (organizationId) => {
          const customer = await getCustomer(deps, organizationId, request.params.id);
          checkSubmission(request.body, customer.type, deps.now());
          return screenSubmission(deps, request.body);
        },
      ),
  );

  app.get<{ Params: { id: string }; Querystring: ListQuery }>(
    '/v1/customers/:id/verifications',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listVerifications',
        summary: 'List a customer’s verifications',
        description: 'Newest first: the history of what was submitted and decided.',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: customerParams,
        querystring: listQuerySchema(ID_PREFIXES.verification),
        response: {
          200: listEnvelopeSchema('Verification', 'A page of verifications.'),
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentList(
        await listCustomerVerifications(
          deps,
          principalOf(request).organizationId,
          request.params.id,
          pageRequestOf(request.query),
        ),
        presentVerification,
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/verifications/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getVerification',
        summary: 'Retrieve a verification',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: verificationParams,
        response: {
          200: { description: 'The verification.', $ref: 'Verification#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentVerification(
        await getVerification(deps, principalOf(request).organizationId, request.params.id),
      ),
  );

  const decisions = [
    { path: 'approve', status: 'verified', summary: 'Approve a verification' },
    { path: 'reject', status: 'rejected', summary: 'Reject a verification' },
    { path: 'request_documents', status: 'documents_required', summary: 'Ask for documents' },
  ] as const;
  for (const decision of decisions) {
    const needsReason = decision.status !== 'verified';
    app.post<{ Params: { id: string }; Body: { reason?: VerificationReason } }>(
      `/v1/verifications/:id/${decision.path}`,
      {
        config: { scope: 'compliance' },
        schema: {
          operationId: `${decision.path === 'request_documents' ? 'requestVerificationDocuments' : `${decision.path}Verification`}`,
          summary: decision.summary,
          description: `An operator's decision on a pending verification (the \`compliance\` scope): it becomes \`${decision.status}\`, and so does the customer's \`kyc_status\`. Recorded as evidence. A decided verification, or one held by an open screening review, is a 409.`,
          tags: TAGS,
          security: BEARER_SECURITY,
          headers: idempotencyHeadersSchema,
          params: verificationParams,
          body: {
            type: 'object',
            additionalProperties: false,
            required: needsReason ? ['reason'] : [],
            properties: needsReason ? { reason: { type: 'string', enum: VERIFICATION_REASONS } } : {},
          },
          response: {
            200: { description: 'The verification.', headers: idempotentWriteHeaders, $ref: 'Verification#' },
            ...problemResponses(...WRITE_PROBLEMS),
          },
        },
      },
      (request, reply) =>
        sendWrite(deps, request, reply, async (tx, organizationId) => ({
          status: 200,
          body: presentVerification(
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
        })),
    );
  }

  app.post<{ Params: { id: string }; Body: { risk_level: RiskLevel; reason: string } }>(
    '/v1/customers/:id/risk',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'overrideCustomerRisk',
        summary: 'Override a customer’s risk level',
        description: 'An operator sets the risk level (the `compliance` scope); recorded as evidence.',
        tags: ['Customers'],
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: customerParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['risk_level', 'reason'],
          properties: {
            risk_level: { type: 'string', enum: RISK_LEVELS },
            reason: text(RISK_OVERRIDE_REASON_LENGTH_MAX),
          },
        },
        response: {
          200: { description: 'The customer.', headers: idempotentWriteHeaders, $ref: 'Customer#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentCustomer(
          await setRiskOverride(
            tx,
            deps,
            organizationId,
            request.params.id,
            { level: request.body.risk_level, reason: request.body.reason },
            requestActor(request),
          ),
        ),
      })),
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/customers/:id/risk',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'clearCustomerRiskOverride',
        summary: 'Clear a risk override',
        description: 'The risk level is derived again; recorded as evidence.',
        tags: ['Customers'],
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: customerParams,
        response: {
          200: { description: 'The customer.', headers: idempotentWriteHeaders, $ref: 'Customer#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentCustomer(
          await setRiskOverride(
            tx,
            deps,
            organizationId,
            request.params.id,
            undefined,
            requestActor(request),
          ),
        ),
      })),
  );
}
