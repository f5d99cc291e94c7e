/** The daily safeguarding reports: customer money against the trust accounts' closing balances (operators). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../../app/deps.ts';
import { ID_PREFIXES } from '../../../../domain/ids.ts';
import { type Currency, SUPPORTED_CURRENCIES } from '../../../../domain/money.ts';
import { type ListQuery, pageRequestOf, presentList } from '../../../../http/presenters.ts';
import {
  found,
  LIST_PROBLEMS,
  organizationOf,
  readOperation,
  retrieveById,
} from '../../../../http/routeKit.ts';
import { idParamsSchema, listEnvelopeSchema, listQuerySchema } from '../../../../http/schemas.ts';
import {
  SAFEGUARDING_LOOKBACK_DAYS,
  SAFEGUARDING_REPORT_STATUSES,
  type SafeguardingReportStatus,
} from '../../domain/safeguarding.ts';
import { getSafeguardingReport, listSafeguardingReports } from '../../useCases/safeguarding.ts';
import { presentSafeguardingReport } from './presenters.ts';
import { dateSchema, TAGS } from './schemas.ts';

type ReportQuery = ListQuery & {
  currency?: Currency;
  status?: SafeguardingReportStatus;
  'date[gte]'?: string;
  'date[lte]'?: string;
};

function listSafeguardingReportsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ReportQuery }>(
    '/v1/safeguarding/reports',
    readOperation({
      scope: 'compliance',
      operationId: 'listSafeguardingReports',
      summary: 'List daily safeguarding reports',
      description: `Newest first: a report per currency and day, written an hour after the day ends (UTC) for each of the last ${SAFEGUARDING_LOOKBACK_DAYS} days, with both figures and their difference.`,
      tags: TAGS,
      querystring: listQuerySchema(ID_PREFIXES.safeguardingReport, {
        currency: {
          type: 'string',
          enum: SUPPORTED_CURRENCIES,
          description: 'Only reports of this currency.',
        },
        status: {
          type: 'string',
          enum: SAFEGUARDING_REPORT_STATUSES,
          description: 'Only reports with this verdict.',
        },
        'date[gte]': dateSchema('Only days on or after this one.'),
        'date[lte]': dateSchema('Only days on or before this one.'),
      }),
      responses: { 200: listEnvelopeSchema('SafeguardingReport', 'A page of reports.') },
      problems: LIST_PROBLEMS,
    }),
    async (request) =>
      presentList(
        await listSafeguardingReports(deps, organizationOf(request), {
          ...pageRequestOf(request.query),
          currency: request.query.currency,
          status: request.query.status,
          dateGte: request.query['date[gte]'],
          dateLte: request.query['date[lte]'],
        }),
        presentSafeguardingReport,
      ),
  );
}

function getSafeguardingReportRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string } }>(
    '/v1/safeguarding/reports/:id',
    readOperation({
      scope: 'compliance',
      operationId: 'getSafeguardingReport',
      summary: 'Retrieve a safeguarding report',
      tags: TAGS,
      params: idParamsSchema(ID_PREFIXES.safeguardingReport, 'Report id.'),
      responses: { 200: found('SafeguardingReport', 'The report.') },
    }),
    retrieveById(deps, getSafeguardingReport, presentSafeguardingReport),
  );
}

/** The daily reports, listed and read. */
export function safeguardingReportRoutes(app: FastifyInstance, deps: Deps): void {
  listSafeguardingReportsRoute(app, deps);
  getSafeguardingReportRoute(app, deps);
}
