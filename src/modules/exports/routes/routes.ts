/**
 * Exports: started, listed, followed and downloaded. Evidence and reconciliation exceptions are operators'
 * records: exporting or downloading them needs the `compliance` scope besides `read`.
 */
import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../../app/apiKeyAuthentication.ts';
import type { Deps } from '../../../app/deps.ts';
import { grantsScope } from '../../../domain/access.ts';
import { AppError } from '../../../domain/errors.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { principalOf } from '../../../http/auth.ts';
import { READ_PROBLEMS } from '../../../http/problems.ts';
import { foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import {
  accessByScope,
  found,
  idempotentWrite,
  readOperation,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { idParamsSchema } from '../../../http/schemas.ts';
import { EXPORT_FORMATS, EXPORT_TYPES, type ExportType, OPERATOR_EXPORT_TYPES } from '../domain.ts';
import {
  type CreateExportInput,
  createExport,
  getExport,
  listOrganizationExports,
  openExportFile,
} from '../useCases/jobs.ts';
import { presentExport } from './presenters.ts';

const TAGS = ['Exports'];
const ACCESS = accessByScope(TAGS);
const exportParams = idParamsSchema(ID_PREFIXES.export, 'Export id.');

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson' } as const;

/** Whether a key with these scopes is refused the operators' records of this type. */
function lacksComplianceFor(type: ExportType, scopes: readonly string[]): boolean {
  return OPERATOR_EXPORT_TYPES.includes(type) && !grantsScope(scopes, 'compliance');
}

function complianceScopeRequired(detail: string, param?: string): AppError {
  return new AppError({
    status: 403,
    code: 'insufficient_permissions',
    title: 'Forbidden',
    detail,
    ...(param === undefined ? {} : { param }),
  });
}

function createExportRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: CreateExportInput }>(
    '/v1/exports',
    writeOperation({
      ...ACCESS.read,
      operationId: 'createExport',
      summary: 'Start an export',
      description:
        "Starts an asynchronous export of the organization’s `transfers`, `ledger_entries`, `events`, or, with the `compliance` scope, `evidence` or `reconciliation_exceptions`, created in `[from, to]`, as CSV (RFC 4180; cells that a spreadsheet would run as a formula are prefixed with `'`) or JSON lines (each record’s API form). Follow it with `GET /v1/exports/{id}` or `export.ready`; download it with `GET /v1/exports/{id}/download`.",
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
      responses: { 202: written('Export', 'The export, queued.') },
    }),
    idempotentWrite(deps, 202, async (tx, organizationId, request) => {
      const principal = principalOf(request);
      if (lacksComplianceFor(request.body.type, principal.scopes)) {
        throw complianceScopeRequired(`Exporting ${request.body.type} needs the 'compliance' scope.`, 'type');
      }
      return presentExport(await createExport(tx, deps, organizationId, request.body, actorIdOf(principal)));
    }),
  );
}

function exportsReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/exports',
    access: ACCESS.read,
    present: presentExport,
    list: {
      operationId: 'listExports',
      summary: 'List exports',
      description: 'Newest first.',
      ...pagedList('Export', 'A page of exports.', ID_PREFIXES.export),
    },
    page: listOrganizationExports,
    retrieve: {
      operationId: 'getExport',
      summary: 'Retrieve an export',
      description: 'Its status and progress (`rows_written` of `rows_estimated`).',
      ...foundById(exportParams, 'Export', 'The export.'),
    },
    get: getExport,
  });
}

function downloadExportRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string } }>(
    '/v1/exports/:id/download',
    readOperation({
      ...ACCESS.read,
      operationId: 'downloadExport',
      summary: 'Download an export',
      description:
        'Streams the finished file (`Content-Type` text/csv or application/x-ndjson, with its SHA-256 in `Digest`-style `X-Content-SHA256`). An export not yet ready, or expired, is a 409.',
      params: exportParams,
      responses: {
        200: found(
          {
            content: {
              'text/csv': { schema: { type: 'string' } },
              'application/x-ndjson': { schema: { type: 'string' } },
            },
          },
          'The file.',
        ),
      },
      problems: [...READ_PROBLEMS, 409],
    }),
    async (request, reply) => {
      const principal = principalOf(request);
      const { job, stream } = await openExportFile(deps, principal.organizationId, request.params.id);
      if (lacksComplianceFor(job.type, principal.scopes)) {
        stream.destroy();
        throw complianceScopeRequired(`Downloading ${job.type} needs the 'compliance' scope.`);
      }
      return reply
        .type(CONTENT_TYPES[job.format])
        .header('content-disposition', `attachment; filename="${job.fileName ?? `${job.id}.${job.format}`}"`)
        .header('x-content-sha256', job.sha256 ?? '')
        .send(stream);
    },
  );
}

export const exportRoutes = routesInOrder(createExportRoute, exportsReadRoutes, downloadExportRoute);
