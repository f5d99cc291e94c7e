/**
 * Queries of a rail partner's own account balances (its float): an admin asks (`POST
 * /v1/rail-partners/{id}/balance-queries`, the partner called before the write's transaction, so a retry with
 * the same Idempotency-Key replays the answer and calls nothing), and reads them back, newest first, or one
 * by id. Also the wire format, shared with the `rail_partner_balance.updated` event.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { requestActorId } from '../../../http/auth.ts';
import { READ_PROBLEMS } from '../../../http/problems.ts';
import { foundById, listRoute, pagedList, retrieveByIdRoute } from '../../../http/readRoutes.ts';
import { preparedWrite, writeOperation, written } from '../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  amountSchema,
  currencySchema,
  idParamsSchema,
  idSchema,
  nullableStringSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import {
  askPartnerBalances,
  BALANCE_QUERY_STATUSES,
  type BalancesAsked,
  getBalanceQuery,
  listPartnerBalanceQueries,
  presentBalanceQuery,
  recordBalanceQuery,
} from '../useCases/balanceQueries.ts';
import { railPartnerDirectory } from '../useCases/directory.ts';
import { ACCESS, railPartnerParams } from './schemas.ts';

const nullable = <T extends object>(schema: T) => ({ ...schema, type: ['string', 'null'] });

export const railPartnerBalanceQuerySchema = apiObjectSchema(
  'RailPartnerBalanceQuery',
  'rail_partner_balance_query',
  'A query of a rail partner’s own account balances (the float it pays payouts from and collects into): `reported` with the accounts as the partner reported them, `requested` until a partner that answers by callback (M-Pesa’s Account Balance) does, or `failed` with the partner’s reason.',
  {
    id: idSchema(ID_PREFIXES.railBalanceQuery, 'Balance query id.'),
    rail_partner: idSchema(ID_PREFIXES.railPartner, 'The partner configuration asked.'),
    partner: { type: 'string' },
    status: { type: 'string', enum: BALANCE_QUERY_STATUSES },
    accounts: {
      type: ['array', 'null'],
      description: 'The partner’s accounts as reported; null until then.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['account', 'currency', 'available', 'current'],
        properties: {
          account: {
            type: 'string',
            description:
              'The partner’s name for it (M-Pesa: `Utility Account`, …; MTN MoMo: `disbursement`, `collection`).',
          },
          currency: currencySchema,
          available: amountSchema('What the account can pay out now.'),
          current: nullable(
            amountSchema(
              'The account’s whole balance, where the partner reports one apart from the available amount.',
            ),
          ),
        },
      },
    },
    failure_code: nullableStringSchema(
      'Why the partner gave no balances: `partner_configuration_error`, `partner_rejected`.',
    ),
    requested_by: { type: 'string', description: 'The member (or the key acting for none) who asked.' },
    created_at: timestampSchema,
    reported_at: { ...timestampSchema, type: ['string', 'null'] },
  },
);

function askBalancesRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string } }>(
    '/v1/rail-partners/:id/balance-queries',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'queryRailPartnerBalances',
      summary: 'Ask a partner for its account balances',
      description:
        'Asks the partner for the balances of its accounts that carry the organization’s money (M-Pesa: Account Balance for `short_code`; MTN MoMo: the disbursement and collection accounts). A partner that answers at once gives a `reported` query; M-Pesa answers by callback, so the query is `requested` until its result reports the balances (or `failed`), once. Each result is a `rail_partner_balance.updated` event. 409 `balances_not_available` for a disabled partner or one without a balance query; 503 `rail_unavailable` when the partner refused or could not be reached (nothing recorded; ask again).',
      params: railPartnerParams,
      responses: { 201: written('RailPartnerBalanceQuery', 'The query, reported or requested.') },
    }),
    preparedWrite<{ Params: { id: string } }, BalancesAsked>(
      deps,
      (organizationId, request) =>
        askPartnerBalances(deps, railPartnerDirectory(deps), organizationId, request.params.id),
      async (tx, _organizationId, request, asked) => ({
        status: 201,
        body: presentBalanceQuery(await recordBalanceQuery(tx, deps, asked, requestActorId(request))),
      }),
    ),
  );
}

function listBalanceQueriesRoute(app: FastifyInstance, deps: Deps): void {
  listRoute(app, deps, {
    path: '/v1/rail-partners/:id/balance-queries',
    access: ACCESS.admin,
    present: presentBalanceQuery,
    list: {
      operationId: 'listRailPartnerBalanceQueries',
      summary: 'List a partner’s balance queries',
      description: 'Newest first: what the partner reported of its accounts each time it was asked.',
      params: railPartnerParams,
      ...pagedList('RailPartnerBalanceQuery', 'A page of balance queries.', ID_PREFIXES.railBalanceQuery),
      // It names a partner, which may not exist: a 404 then.
      problems: READ_PROBLEMS,
    },
    page: listPartnerBalanceQueries,
    filtersOf: (_query, request) => ({ configId: (request.params as { id: string }).id }),
  });
}

export function balanceQueryRoutes(app: FastifyInstance, deps: Deps): void {
  askBalancesRoute(app, deps);
  listBalanceQueriesRoute(app, deps);
  retrieveByIdRoute(app, deps, '/v1/rail-partner-balance-queries/:id', getBalanceQuery, presentBalanceQuery, {
    ...ACCESS.admin,
    operationId: 'getRailPartnerBalanceQuery',
    summary: 'Retrieve a balance query',
    ...foundById(
      idParamsSchema(ID_PREFIXES.railBalanceQuery, 'Balance query id.'),
      'RailPartnerBalanceQuery',
      'The query.',
    ),
  });
}
