/** Closing balances of trust accounts, as their bank statements report them (operators: the `compliance` scope). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../../app/deps.ts';
import { ID_PREFIXES } from '../../../../domain/ids.ts';
import { listRoute, pagedList } from '../../../../http/readRoutes.ts';
import { recordFromBody } from '../../../../http/routeEffects.ts';
import { createOrFindWrite, writeOperation } from '../../../../http/routeKit.ts';
import { routesInOrder } from '../../../../http/routeOrder.ts';
import { daySchema, idSchema } from '../../../../http/schemas.ts';
import { createdOrFound } from '../../../../http/writeRoutes.ts';
import { textSchema } from '../../../compliance/index.ts';
import { SAFEGUARDING_NOTE_LENGTH_MAX } from '../../domain/safeguarding.ts';
import {
  listSafeguardingBalances,
  type ReportBalanceInput,
  reportSafeguardingBalance,
} from '../../useCases/safeguardingBalances.ts';
import { presentSafeguardingBalance } from './presenters.ts';
import { ACCESS } from './schemas.ts';

// Spelled out: the published document lists `required` before `additionalProperties` in this body.
const reportBalanceBody = {
  type: 'object',
  required: ['trust_account', 'date', 'closing_balance'],
  additionalProperties: false,
  properties: {
    trust_account: idSchema(ID_PREFIXES.trustAccount, 'The trust account.'),
    date: daySchema('The statement’s day.'),
    closing_balance: {
      type: 'string',
      maxLength: 40,
      description:
        'The closing balance, a decimal string at the currency’s precision (negative when overdrawn).',
      examples: ['1500.00'],
    },
    replaces: idSchema(
      ID_PREFIXES.safeguardingBalance,
      'The current figure this one corrects (see its 409); needs a `note`.',
    ),
    note: textSchema(SAFEGUARDING_NOTE_LENGTH_MAX, 'Why the figure is corrected.'),
  },
};

function reportSafeguardingBalanceRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: ReportBalanceInput }>(
    '/v1/safeguarding/balances',
    writeOperation({
      ...ACCESS.compliance,
      operationId: 'reportSafeguardingBalance',
      summary: 'Report a trust account’s closing balance',
      description:
        'The closing balance of a trust account for a day (today, UTC, or earlier, within the days the account counts), as its bank statement reports it, in the account’s currency. One figure per account and day: the same figure again is a 200 with the recorded one; a different one is a 409 `safeguarding_balance_conflict`, unless it names the figure it corrects in `replaces`, with a `note`, and then supersedes it (201). A day already checked is judged again on the new figure. Recorded as evidence (`safeguarding.balance`).',
      body: reportBalanceBody,
      responses: createdOrFound(
        'SafeguardingBalance',
        'The closing balance, recorded.',
        'The same figure was reported before: the recorded one.',
      ),
    }),
    createOrFindWrite(
      deps,
      recordFromBody(deps, reportSafeguardingBalance, ({ balance }) => presentSafeguardingBalance(balance)),
    ),
  );
}

function listSafeguardingBalancesRoute(app: FastifyInstance, deps: Deps): void {
  listRoute(app, deps, {
    path: '/v1/safeguarding/balances',
    access: ACCESS.compliance,
    present: presentSafeguardingBalance,
    list: {
      operationId: 'listSafeguardingBalances',
      summary: 'List reported closing balances',
      description: 'Newest first, current and superseded.',
      ...pagedList('SafeguardingBalance', 'A page of closing balances.', ID_PREFIXES.safeguardingBalance, {
        trust_account: idSchema(ID_PREFIXES.trustAccount, 'Only the balances of this trust account.'),
      }),
    },
    page: listSafeguardingBalances,
    filtersOf: (query: { trust_account?: string }) => ({ trustAccountId: query.trust_account }),
  });
}

/** Closing balances, reported and listed. */
export const safeguardingBalanceRoutes = routesInOrder(
  reportSafeguardingBalanceRoute,
  listSafeguardingBalancesRoute,
);
