/** A loan's repayments: a manual one taken from the borrower's wallet, and every one listed. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import { requestActorId } from '../../../http/auth.ts';
import { type ListQuery, pageRequestOf, presentList } from '../../../http/presenters.ts';
import {
  closedObjectSchema,
  idempotentWrite,
  organizationOf,
  readOperation,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { amountInputSchema, listEnvelopeSchema, listQuerySchema } from '../../../http/schemas.ts';
import { listLoanRepayments } from '../useCases/loans.ts';
import { repayLoan } from '../useCases/repayments.ts';
import { presentLoanRepayment } from './presenters.ts';
import { ACCESS, loanIdParams, TAGS } from './schemas.ts';

function repayLoanRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { amount: string | number } }>(
    '/v1/loans/:id/repayments',
    writeOperation({
      scope: 'write',
      operationId: 'repayLoan',
      summary: 'Repay a loan',
      description:
        'Takes `amount` from the borrower’s wallet and allocates it: penalty, then each instalment’s fee, interest and principal, oldest first; beyond what is due it pays the next instalments early (interest is not rebated). More than the outstanding total is a 422 `repayment_exceeds_outstanding`; more than the wallet has available a 422 `insufficient_funds`. Emits `loan.repayment_received`, and `loan.paid_off` when nothing is left.',
      tags: TAGS,
      params: loanIdParams,
      body: closedObjectSchema(
        {
          amount: amountInputSchema('Decimal string in the loan’s currency (a JSON number is read exactly).'),
        },
        ['amount'],
      ),
      responses: { 201: written('LoanRepayment', 'The repayment.') },
    }),
    idempotentWrite(deps, 201, async (tx, organizationId, request) => {
      const { repayment, view } = await repayLoan(
        tx,
        deps,
        organizationId,
        request.params.id,
        request.body,
        requestActorId(request),
        numberSourceOf(request.body, 'amount'),
      );
      return presentLoanRepayment(repayment, view.loan.currency);
    }),
  );
}

function listLoanRepaymentsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string }; Querystring: ListQuery }>(
    '/v1/loans/:id/repayments',
    readOperation({
      ...ACCESS.read,
      operationId: 'listLoanRepayments',
      summary: 'List a loan’s repayments',
      description: 'Manual and automatic, newest first.',
      params: loanIdParams,
      querystring: listQuerySchema(ID_PREFIXES.loanRepayment),
      responses: { 200: listEnvelopeSchema('LoanRepayment', 'A page of repayments.') },
    }),
    async (request) => {
      const { loan, page } = await listLoanRepayments(
        deps,
        organizationOf(request),
        request.params.id,
        pageRequestOf(request.query),
      );
      return presentList(page, (r) => presentLoanRepayment(r, loan.currency));
    },
  );
}

export const loanRepaymentRoutes = routesInOrder(repayLoanRoute, listLoanRepaymentsRoute);
