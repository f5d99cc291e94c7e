import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import type { EvidenceSubject } from '../../app/evidence.ts';
import { listEvidence, listOrganizationEvidenceRecords } from '../../app/evidence.ts';
import { EVIDENCE_KINDS, type EvidenceKind } from '../../domain/evidence.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { presentEvidence } from '../compliancePresenters.ts';
import type { ListQuery } from '../presenters.ts';
import { retrievePageOfId } from '../readRoutes.ts';
import { LIST_PROBLEMS, readOperation, retrieveFilteredPage } from '../routeKit.ts';
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

const evidencePageSchema = listEnvelopeSchema('Evidence', 'A page of evidence records.');

function listOrganizationEvidenceRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { kind?: EvidenceKind } }>(
    '/v1/evidence',
    readOperation({
      scope: 'compliance',
      operationId: 'listEvidence',
      summary: 'List the organization’s evidence',
      description:
        'The whole evidence chain, newest first: every record, including those about no one resource (AML rule changes). Needs the `compliance` scope.',
      tags: TAGS,
      querystring: listQuerySchema(ID_PREFIXES.evidence, {
        kind: { type: 'string', enum: EVIDENCE_KINDS, description: 'Only records of this kind.' },
      }),
      responses: { 200: evidencePageSchema },
      problems: LIST_PROBLEMS,
    }),
    retrieveFilteredPage(
      deps,
      listOrganizationEvidenceRecords,
      (query: { kind?: EvidenceKind }) => ({ kind: query.kind }),
      presentEvidence,
    ),
  );
}

function listSubjectEvidenceRoute(
  app: FastifyInstance,
  deps: Deps,
  { subject, path, prefix, operationId }: (typeof SUBJECTS)[number],
): void {
  app.get<{ Params: { id: string }; Querystring: ListQuery }>(
    path,
    readOperation({
      scope: 'compliance',
      operationId,
      summary: `List a ${subject}'s evidence`,
      description: `Every compliance decision recorded about the ${subject}, newest first (by place in the organization's evidence chain). Needs the \`compliance\` scope.`,
      tags: TAGS,
      params: idParamsSchema(prefix, `The ${subject}'s id.`),
      querystring: listQuerySchema(ID_PREFIXES.evidence),
      responses: { 200: evidencePageSchema },
    }),
    retrievePageOfId(
      deps,
      (deps, organizationId, id, page) => listEvidence(deps, organizationId, subject, id, page),
      presentEvidence,
    ),
  );
}

/** A resource's compliance evidence: operators only (the `compliance` scope), newest first. */
export function evidenceRoutes(app: FastifyInstance, deps: Deps): void {
  listOrganizationEvidenceRoute(app, deps);
  for (const subject of SUBJECTS) listSubjectEvidenceRoute(app, deps, subject);
}
