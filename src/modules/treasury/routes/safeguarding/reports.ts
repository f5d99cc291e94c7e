/** The daily safeguarding reports: customer money against the trust accounts' closing balances (operators). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../../app/deps.ts';
import { ID_PREFIXES } from '../../../../domain/ids.ts';
import type { Currency } from '../../../../domain/money.ts';
import { enumFilter, foundById, listAndRetrieveRoutes, pagedList } from '../../../../http/readRoutes.ts';
import { daySchema, idParamsSchema } from '../../../../http/schemas.ts';
import {
  SAFEGUARDING_LOOKBACK_DAYS,
  SAFEGUARDING_REPORT_STATUSES,
  type SafeguardingReportStatus,
} from '../../domain/safeguarding.ts';
import { getSafeguardingReport, listSafeguardingReports } from '../../useCases/safeguarding.ts';
import { presentSafeguardingReport } from './presenters.ts';
import { ACCESS, currencyFilter } from './schemas.ts';

/** The reports' own filters: a currency, a verdict, a range of days. */
interface ReportFilters {
  currency?: Currency;
  status?: SafeguardingReportStatus;
  'date[gte]'?: string;
  'date[lte]'?: string;
}

/** The daily reports, listed and read. */
export function safeguardingReportRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/safeguarding/reports',
    access: ACCESS.compliance,
    present: presentSafeguardingReport,
    list: {
      operationId: 'listSafeguardingReports',
      summary: 'List daily safeguarding reports',
      description: `Newest first: a report per currency and day, written an hour after the day ends (UTC) for each of the last ${SAFEGUARDING_LOOKBACK_DAYS} days, with both figures and their difference.`,
      ...pagedList('SafeguardingReport', 'A page of reports.', ID_PREFIXES.safeguardingReport, {
        currency: currencyFilter('Only reports of this currency.'),
        status: enumFilter(SAFEGUARDING_REPORT_STATUSES, 'Only reports with this verdict.'),
        'date[gte]': daySchema('Only days on or after this one.'),
        'date[lte]': daySchema('Only days on or before this one.'),
      }),
    },
    page: listSafeguardingReports,
    filtersOf: (query: ReportFilters) => ({
      currency: query.currency,
      status: query.status,
      dateGte: query['date[gte]'],
      dateLte: query['date[lte]'],
    }),
    retrieve: {
      operationId: 'getSafeguardingReport',
      summary: 'Retrieve a safeguarding report',
      ...foundById(
        idParamsSchema(ID_PREFIXES.safeguardingReport, 'Report id.'),
        'SafeguardingReport',
        'The report.',
      ),
    },
    get: getSafeguardingReport,
  });
}
