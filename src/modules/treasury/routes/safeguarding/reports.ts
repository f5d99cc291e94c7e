/** The daily safeguarding reports: customer money against the trust accounts' closing balances (operators). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../../app/deps.ts';
import { ID_PREFIXES } from '../../../../domain/ids.ts';
import type { Currency } from '../../../../domain/money.ts';
import type { ListQuery } from '../../../../http/presenters.ts';
import { enumFilter, foundById, pagedList, retrieveByIdRoute } from '../../../../http/readRoutes.ts';
import { readOperation, retrieveFilteredPage } from '../../../../http/routeKit.ts';
import { idParamsSchema } from '../../../../http/schemas.ts';
import {
  SAFEGUARDING_LOOKBACK_DAYS,
  SAFEGUARDING_REPORT_STATUSES,
  type SafeguardingReportStatus,
} from '../../domain/safeguarding.ts';
import { getSafeguardingReport, listSafeguardingReports } from '../../useCases/safeguarding.ts';
import { presentSafeguardingReport } from './presenters.ts';
import { ACCESS, currencyFilter, dateSchema } from './schemas.ts';

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
      ...ACCESS.compliance,
      operationId: 'listSafeguardingReports',
      summary: 'List daily safeguarding reports',
      description: `Newest first: a report per currency and day, written an hour after the day ends (UTC) for each of the last ${SAFEGUARDING_LOOKBACK_DAYS} days, with both figures and their difference.`,
      ...pagedList('SafeguardingReport', 'A page of reports.', ID_PREFIXES.safeguardingReport, {
        currency: currencyFilter('Only reports of this currency.'),
        status: enumFilter(SAFEGUARDING_REPORT_STATUSES, 'Only reports with this verdict.'),
        'date[gte]': dateSchema('Only days on or after this one.'),
        'date[lte]': dateSchema('Only days on or before this one.'),
      }),
    }),
    retrieveFilteredPage(
      deps,
      listSafeguardingReports,
      (query) => ({
        currency: query.currency,
        status: query.status,
        dateGte: query['date[gte]'],
        dateLte: query['date[lte]'],
      }),
      presentSafeguardingReport,
    ),
  );
}

function getSafeguardingReportRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(
    app,
    deps,
    '/v1/safeguarding/reports/:id',
    getSafeguardingReport,
    presentSafeguardingReport,
    {
      ...ACCESS.compliance,
      operationId: 'getSafeguardingReport',
      summary: 'Retrieve a safeguarding report',
      ...foundById(
        idParamsSchema(ID_PREFIXES.safeguardingReport, 'Report id.'),
        'SafeguardingReport',
        'The report.',
      ),
    },
  );
}

/** The daily reports, listed and read. */
export function safeguardingReportRoutes(app: FastifyInstance, deps: Deps): void {
  listSafeguardingReportsRoute(app, deps);
  getSafeguardingReportRoute(app, deps);
}
