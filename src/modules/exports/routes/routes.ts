import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../../app/apiKeys.ts';
import type { Deps } from '../../../app/deps.ts';
import { grantsScope } from '../../../domain/apiKeys.ts';
import { AppError } from '../../../domain/errors.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { BEARER_SECURITY, principalOf } from '../../../http/auth.ts';
import { type ListQuery, pageRequestOf, presentList } from '../../../http/presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../../../http/problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import { sendWrite } from '../../../http/writes.ts';
import {
  EXPORT_FORMATS,
  EXPORT_STATUSES,
  EXPORT_TYPES,
  type ExportJob,
  OPERATOR_EXPORT_TYPES,
} from '../domain.ts';
import {
  type CreateExportInput,
  createExport,
  getExport,
  listOrganizationExports,
  openExportFile,
} from '../useCases/jobs.ts';

const TAGS = ['Exports'];
const exportParams = idParamsSchema(ID_PREFIXES.export, 'Export id.');

export const exportSchema = {
  $id: 'Export',
  type: 'object',
  description:
    'An export job: `queued` → `running` (with progress) → `ready` (download it; `export.ready` is emitted) or `failed`; a ready file is kept 7 days, then `expired`.',
  required: [
    'object',
    'id',
    'type',
    'format',
    'from',
    'to',
    'status',
    'rows_written',
    'rows_estimated',
    'bytes',
    'sha256',
    'error',
    'created_by',
    'created_at',
    'started_at',
    'finished_at',
    'expires_at',
  ],
  properties: {
    object: { type: 'string', enum: ['export'] },
    id: idSchema(ID_PREFIXES.export, 'Export id.'),
    type: { type: 'string', enum: EXPORT_TYPES },
    format: { type: 'string', enum: EXPORT_FORMATS },
    from: nullableTimestampSchema,
    to: nullableTimestampSchema,
    status: { type: 'string', enum: EXPORT_STATUSES },
    rows_written: { type: 'integer', description: 'Records written so far (the file’s, once ready).' },
    rows_estimated: {
      type: ['integer', 'null'],
      description: 'Records the range held when the export began.',
    },
    bytes: { type: ['integer', 'null'] },
    sha256: {
      type: ['string', 'null'],
      description: 'SHA-256 of the file, in hex: check the download against it.',
    },
    error: { type: ['string', 'null'] },
    created_by: { type: 'string' },
    created_at: timestampSchema,
    started_at: nullableTimestampSchema,
    finished_at: nullableTimestampSchema,
    expires_at: nullableTimestampSchema,
  },
} as const;

export function presentExport(job: ExportJob) {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    object: 'export',
    id: job.id,
    type: job.type,
    format: job.format,
    from: iso(job.from),
    to: iso(job.to),
    status: job.status,
    rows_written: job.rowsWritten,
    rows_estimated: job.rowsEstimated,
    bytes: job.bytes,
    sha256: job.sha256,
    error: job.error,
    created_by: job.createdBy,
    created_at: job.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    expires_at: iso(job.expiresAt),
  };
}

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson' } as const;

export function exportRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: CreateExportInput }>(
    '/v1/exports',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'createExport',
        summary: 'Start an export',
        description:
          "Starts an asynchronous export of the organization’s `transfers`, `ledger_entries`, `events`, or, with the `compliance` scope, `evidence` or `reconciliation_exceptions`, created in `[from, to]`, as CSV (RFC 4180; cells that a spreadsheet would run as a formula are prefixed with `'`) or JSON lines (each record’s API form). Follow it with `GET /v1/exports/{id}` or `export.ready`; download it with `GET /v1/exports/{id}/download`.",
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          required: ['type', 'format'],
          additionalProperties: false,
          properties: {
            type: { type: 'string', enum: EXPORT_TYPES },
            format: { type: 'string', enum: EXPORT_FORMATS },
            from: {
              type: 'string',
              format: 'date-time',
              description: 'Records created at or after this instant.',
            },
            to: {
              type: 'string',
              format: 'date-time',
              description: 'Records created at or before this instant.',
            },
          },
        },
        response: {
          202: { description: 'The export, queued.', headers: idempotentWriteHeaders, $ref: 'Export#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const principal = principalOf(request);
        if (
          OPERATOR_EXPORT_TYPES.includes(request.body.type) &&
          !grantsScope(principal.scopes, 'compliance')
        ) {
          throw new AppError({
            status: 403,
            code: 'insufficient_permissions',
            title: 'Forbidden',
            detail: `Exporting ${request.body.type} needs the 'compliance' scope.`,
            param: 'type',
          });
        }
        const job = await createExport(tx, deps, organizationId, request.body, actorIdOf(principal));
        return { status: 202, body: presentExport(job) };
      }),
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/exports',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listExports',
        summary: 'List exports',
        description: 'Newest first.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.export),
        response: {
          200: listEnvelopeSchema('Export', 'A page of exports.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listOrganizationExports(
          deps,
          principalOf(request).organizationId,
          pageRequestOf(request.query),
        ),
        presentExport,
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/exports/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getExport',
        summary: 'Retrieve an export',
        description: 'Its status and progress (`rows_written` of `rows_estimated`).',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: exportParams,
        response: {
          200: { description: 'The export.', $ref: 'Export#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentExport(await getExport(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/exports/:id/download',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'downloadExport',
        summary: 'Download an export',
        description:
          'Streams the finished file (`Content-Type` text/csv or application/x-ndjson, with its SHA-256 in `Digest`-style `X-Content-SHA256`). An export not yet ready, or expired, is a 409.',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: exportParams,
        response: {
          200: {
            description: 'The file.',
            content: {
              'text/csv': { schema: { type: 'string' } },
              'application/x-ndjson': { schema: { type: 'string' } },
            },
          },
          ...problemResponses(...READ_PROBLEMS, 409),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { job, stream } = await openExportFile(deps, principal.organizationId, request.params.id);
      if (OPERATOR_EXPORT_TYPES.includes(job.type) && !grantsScope(principal.scopes, 'compliance')) {
        stream.destroy();
        throw new AppError({
          status: 403,
          code: 'insufficient_permissions',
          title: 'Forbidden',
          detail: `Downloading ${job.type} needs the 'compliance' scope.`,
        });
      }
      return reply
        .type(CONTENT_TYPES[job.format])
        .header('content-disposition', `attachment; filename="${job.fileName ?? `${job.id}.${job.format}`}"`)
        .header('x-content-sha256', job.sha256 ?? '')
        .send(stream);
    },
  );
}
