/**
 * Evidence's routes: the organization's evidence listed, and the evidence of one subject (a transfer, customer
 * or wallet) on that subject's own path, added by the module that owns it.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import {
  type EvidenceSubject,
  type EvidenceSubjectFinder,
  listEvidence,
  listOrganizationEvidenceRecords,
} from '../../app/evidence.ts';
import { EVIDENCE_KINDS, type EvidenceKind, type EvidenceRecord } from '../../domain/evidence.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { ListQuery } from '../presenters.ts';
import { enumFilter, retrievePageOfId } from '../readRoutes.ts';
import { LIST_PROBLEMS, readOperation, retrieveFilteredPage } from '../routeKit.ts';
import { idParamsSchema, listEnvelopeSchema, listQuerySchema } from '../schemas.ts';

const TAGS = ['Evidence'];

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
        kind: enumFilter(EVIDENCE_KINDS, 'Only records of this kind.'),
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

/** A resource whose evidence has a route of its own, added by the resource's routes. */
export interface EvidenceSubjectRoute {
  subject: EvidenceSubject;
  path: string;
  prefix: (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];
  operationId: string;
  requireSubject: EvidenceSubjectFinder;
}

/** `GET <path>`: the resource's compliance evidence, operators only (the `compliance` scope), newest first. */
export function subjectEvidenceRoute(
  app: FastifyInstance,
  deps: Deps,
  { subject, path, prefix, operationId, requireSubject }: EvidenceSubjectRoute,
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
      (deps, organizationId, id, page) =>
        listEvidence(deps, organizationId, subject, id, page, requireSubject),
      presentEvidence,
    ),
  );
}

/** The organization's whole evidence chain; each resource's own evidence is its routes' (subjectEvidenceRoute). */
export function evidenceRoutes(app: FastifyInstance, deps: Deps): void {
  listOrganizationEvidenceRoute(app, deps);
}

/** The record as it was hashed, plus `object` and `hash`: a reader can re-hash it without our code. */
export function presentEvidence(record: EvidenceRecord) {
  return {
    object: 'evidence',
    ...(JSON.parse(record.payload) as Record<string, unknown>),
    hash: record.hash,
  };
}
