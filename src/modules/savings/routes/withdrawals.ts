/** Money leaving a savings account: notices of a withdrawal on a notice product, and withdrawals. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { changeById } from '../../../http/routeEffects.ts';
import {
  closedObjectSchema,
  found,
  idempotentWrite,
  organizationOf,
  presentWholeList,
  readOperation,
  wholeListSchema,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { idParamsSchema, idSchema, pageLimitSchema } from '../../../http/schemas.ts';
import {
  giveSavingsNotice,
  listSavingsNotices,
  savingsNoticeJson,
  savingsWithdrawalJson,
  type WithdrawalInput,
  withdrawSavings,
} from '../useCases/withdrawals.ts';
import { ACCESS, amountBody, TAGS } from './schemas.ts';

const accountParams = idParamsSchema(ID_PREFIXES.wallet, 'The savings account.');

function giveSavingsNoticeRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { amount: string | number } }>(
    '/v1/savings-accounts/:id/notices',
    writeOperation({
      scope: 'write',
      operationId: 'giveSavingsNotice',
      summary: 'Give notice of a withdrawal',
      description:
        'On a notice product: the amount may be withdrawn, once, from `available_on` (the product’s `notice_days` after today on the organization’s clock). Emits `savings.notice.given`. On another product, a 422 `savings_withdrawal_refused` (reason `notice_not_applicable`).',
      tags: TAGS,
      params: accountParams,
      body: closedObjectSchema({ amount: amountBody }, ['amount']),
      responses: { 201: written('SavingsNotice', 'The notice.') },
    }),
    idempotentWrite(
      deps,
      201,
      changeById(deps, giveSavingsNotice, ({ notice, currency }) => savingsNoticeJson(notice, currency)),
    ),
  );
}

function listSavingsNoticesRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string }; Querystring: { limit: number } }>(
    '/v1/savings-accounts/:id/notices',
    readOperation({
      ...ACCESS.read,
      operationId: 'listSavingsNotices',
      summary: 'List a savings account’s notices',
      description: 'Newest first.',
      params: accountParams,
      querystring: closedObjectSchema({ limit: pageLimitSchema('notices') }),
      responses: { 200: found(wholeListSchema('SavingsNotice'), 'The newest notices.') },
    }),
    async (request) => {
      const { notices, currency } = await listSavingsNotices(
        deps,
        organizationOf(request),
        request.params.id,
        request.query.limit,
      );
      return presentWholeList(notices, (n) => savingsNoticeJson(n, currency));
    },
  );
}

function withdrawSavingsRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: WithdrawalInput }>(
    '/v1/savings-accounts/:id/withdrawals',
    writeOperation({
      scope: 'write',
      operationId: 'withdrawSavings',
      summary: 'Withdraw from a savings account',
      description:
        'Pays `amount` to `destination`, a wallet of the same owner, by the product’s rules: a notice product needs `notice`, one whose `available_on` has come, still open and covering the amount; a fixed-term account before maturity pays `early_withdrawal_penalty_bps` of the amount besides, to the organization’s fee income; what is left must be nothing or at least the minimum balance. A refusal is a 422 `savings_withdrawal_refused` with `reason` (`notice_required`, `notice_not_open`, `notice_period_running`, `amount_exceeds_notice`, `below_minimum_balance`, `destination_not_owner`); too little money is `insufficient_funds`. Emits `savings.withdrawal.completed`.',
      tags: TAGS,
      params: accountParams,
      body: closedObjectSchema(
        {
          destination: idSchema(ID_PREFIXES.wallet, 'A wallet of the same owner and currency.'),
          amount: amountBody,
          notice: idSchema(ID_PREFIXES.savingsNotice, 'For a notice product: the notice withdrawn under.'),
        },
        ['destination', 'amount'],
      ),
      responses: { 201: written('SavingsWithdrawal', 'The withdrawal.') },
    }),
    idempotentWrite(
      deps,
      201,
      changeById(deps, withdrawSavings, ({ withdrawal, currency }) =>
        savingsWithdrawalJson(withdrawal, currency),
      ),
    ),
  );
}

export const savingsWithdrawalRoutes = routesInOrder(
  giveSavingsNoticeRoute,
  listSavingsNoticesRoute,
  withdrawSavingsRoute,
);
