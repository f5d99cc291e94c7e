import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import type { EvidenceSubject } from '../../app/evidence.ts';
import { listEvidence, listOrganizationEvidenceRecords } from '../../app/evidence.ts';
import { EVIDENCE_KINDS, type EvidenceKind } from '../../domain/evidence.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { BEARER_SECURITY, principalOf } from '../auth.ts';
import { presentEvidence } from '../compliancePresenters.ts';
import { type ListQuery, pageRequestOf, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS } from '../problems.ts';
import { idParamsSchema, listEnvelopeSchema, listQuerySchema } from '../schemas.ts';

const TAGS = ['Evidence'];

const SUBJECTS: {
  subject: EvidenceSubject;
  path: string;
  prefix: (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];
  operationId: string;
}[] = [
  {
    subject: 'transfer',
    path: '/v1/transfers/:id/evidence',
    prefix: ID_PREFIXES.transfer,
    operationId: 'listTransferEvidence',
  },
  {
    subject: 'customer',
    path: '/v1/customers/:id/evidence',
    prefix: ID_PREFIXES.customer,
    operationId: 'listCustomerEvidence',
  },
  {
    subject: 'wallet',
    path: '/v1/wallets/:id/evidence',
    prefix: ID_PREFIXES.wallet,
    operationId: 'listWalletEvidence',
  },
];

/** A resource's compliance evidence: operators only (the `compliance` scope), newest first. */
export function evidenceRoutes(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { kind?: EvidenceKind } }>(
    '/v1/evidence',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'listEvidence',
        summary: 'List the organization’s evidence',
        description:
          'The whole evidence chain, newest first: every record, including those about no one resource (AML rule changes). Needs the `compliance` scope.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.evidence, {
          kind: { type: 'string', enum: EVIDENCE_KINDS, description: 'Only records of this kind.' },
        }),
        response: {
          200: listEnvelopeSchema('Evidence', 'A page of evidence records.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const page = await listOrganizationEvidenceRecords(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        kind: request.query.kind,
      });
      return presentList(page, presentEvidence);
    },
  );

  for (const { subject, path, prefix, operationId } of SUBJECTS) {
    app.get<{ Params: { id: string }; Querystring: ListQuery }>(
      path,
      {
        config: { scope: 'compliance' },
        schema: {
          operationId,
          summary: `List a ${subject}'s evidence`,
          description: `Every compliance decision recorded about the ${subject}, newest first (by place in the organization's evidence chain). Needs the \`compliance\` scope.`,
          tags: TAGS,
          security: BEARER_SECURITY,
          params: idParamsSchema(prefix, `The ${subject}'s id.`),
          querystring: listQuerySchema(ID_PREFIXES.evidence),
          response: {
            200: listEnvelopeSchema('Evidence', 'A page of evidence records.'),
            ...problemResponses(...READ_PROBLEMS),
          },
        },
      },
      async (request) => {
        const page = await listEvidence(
          deps,
          principalOf(request).organizationId,
          subject,
          request.params.id,
          pageRequestOf(request.query),
        );
        return presentList(page, presentEvidence);
      },
    );
  }
}
