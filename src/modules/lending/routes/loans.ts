/** Loans from application to their end: applied for, listed and read, canceled, disbursed, written off. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import { requestActor, requestActorId } from '../../../http/auth.ts';
import { type ListQuery, pageRequestOf, presentList } from '../../../http/presenters.ts';
import { enumFilter, foundById, pagedList, retrieveByIdRoute } from '../../../http/readRoutes.ts';
import { actOnId, changeById } from '../../../http/routeEffects.ts';
import {
  closedObjectSchema,
  organizationOf,
  readOperation,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { amountInputSchema, idSchema } from '../../../http/schemas.ts';
import { writeRoute, writtenById } from '../../../http/writeRoutes.ts';
import { sendWrite } from '../../../http/writes.ts';
import { LOAN_STATUSES, LOAN_WRITE_OFF_REASON_CHARS_MAX, type LoanStatus } from '../domain/loans.ts';
import {
  applyForLoan,
  cancelLoan,
  decideLoanApplication,
  type LoanApplicationInput,
} from '../useCases/applications.ts';
import { disburseLoan } from '../useCases/disbursement.ts';
import { getLoan, listOrganizationLoans } from '../useCases/loans.ts';
import { writeOffLoan } from '../useCases/writeOff.ts';
import { presentLoan } from './presenters.ts';
import { ACCESS, loanIdParams } from './schemas.ts';

const applicationBody = closedObjectSchema(
  {
    product: idSchema(ID_PREFIXES.loanProduct, 'The product.'),
    wallet: idSchema(ID_PREFIXES.wallet, 'The borrower’s wallet.'),
    principal: amountInputSchema('To lend, a decimal string in the product’s currency, within its bounds.'),
  },
  ['product', 'wallet', 'principal'],
);

function applyForLoanRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: LoanApplicationInput }>(
    '/v1/loans',
    writeOperation({
      ...ACCESS.write,
      operationId: 'applyForLoan',
      summary: 'Apply for a loan',
      description:
        'An application for `principal` on a product, to be lent to `wallet` (its currency the product’s, active). The organization’s policy decides it at once with its `loan` rules: `allow` (the loan is `approved`), `deny` (`rejected`, reason `policy_denied`) or `require_approval` (`pending_approval`, with an approval members vote on). With no `loan` rule, it is approved. Emits `loan.applied`, and `loan.approved` or `loan.rejected` when decided.',
      body: applicationBody,
      responses: { 201: written('Loan', 'The loan, decided.') },
    }),
    (request, reply) =>
      sendWrite<Awaited<ReturnType<typeof decideLoanApplication>>>(
        deps,
        request,
        reply,
        async (tx, organizationId, decided) => ({
          status: 201,
          body: presentLoan(
            await applyForLoan(
              tx,
              deps,
              organizationId,
              decided,
              request.body.wallet,
              requestActorId(request),
              requestActor(request),
            ),
          ),
        }),
        // Decided before the key's transaction opens: it reads the policy cache and the customer.
        (organizationId) =>
          decideLoanApplication(
            deps,
            organizationId,
            request.body,
            numberSourceOf(request.body, 'principal'),
          ),
      ),
  );
}

function listLoansRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { status?: LoanStatus; wallet?: string } }>(
    '/v1/loans',
    readOperation({
      ...ACCESS.read,
      operationId: 'listLoans',
      summary: 'List loans',
      description: 'Newest first; filter by status or wallet.',
      ...pagedList('Loan', 'A page of loans.', ID_PREFIXES.loan, {
        status: enumFilter(LOAN_STATUSES, 'Only loans in this status.'),
        wallet: idSchema(ID_PREFIXES.wallet, 'Only this wallet’s loans.'),
      }),
    }),
    async (request) => {
      const page = await listOrganizationLoans(deps, organizationOf(request), {
        ...pageRequestOf(request.query),
        status: request.query.status,
        walletId: request.query.wallet,
      });
      return presentList({ ...page, data: page.data.map((view) => ({ id: view.loan.id, view })) }, (item) =>
        presentLoan(item.view),
      );
    },
  );
}

function getLoanRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/loans/:id', getLoan, presentLoan, {
    ...ACCESS.read,
    operationId: 'getLoan',
    summary: 'Retrieve a loan',
    description: 'With its schedule, what is paid and outstanding, and its arrears.',
    ...foundById(loanIdParams, 'Loan', 'The loan.'),
  });
}

function cancelLoanRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute(app, deps, 'POST', '/v1/loans/:id/cancel', 200, actOnId(deps, cancelLoan, presentLoan), {
    ...ACCESS.write,
    operationId: 'cancelLoan',
    summary: 'Cancel a loan application',
    description:
      'Withdraws a loan that is `pending_approval` (its approval is canceled) or `approved` and not yet disbursed; it ends `canceled`. Any other status is a 409 `invalid_state_transition`. Emits `loan.canceled`.',
    ...writtenById(loanIdParams, 'Loan', 'The loan, canceled.'),
  });
}

function disburseLoanRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute(app, deps, 'POST', '/v1/loans/:id/disburse', 200, actOnId(deps, disburseLoan, presentLoan), {
    ...ACCESS.write,
    operationId: 'disburseLoan',
    summary: 'Disburse a loan',
    description:
      'Pays an `approved` loan’s principal into the borrower’s wallet (the organization’s loan receivable is debited) and fixes its schedule from the organization’s today. Once: a loan already disbursed, or not approved, is a 409 `invalid_state_transition`; a wallet that cannot receive a 409 `wallet_not_active`. Emits `loan.disbursed`.',
    ...writtenById(loanIdParams, 'Loan', 'The loan, active.'),
  });
}

/** Applications through disbursement, in the order the document lists them. */
export const loanApplicationRoutes = routesInOrder(
  applyForLoanRoute,
  listLoansRoute,
  getLoanRoute,
  cancelLoanRoute,
  disburseLoanRoute,
);

export function writeOffLoanRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute(app, deps, 'POST', '/v1/loans/:id/write-off', 200, changeById(deps, writeOffLoan, presentLoan), {
    ...ACCESS.admin,
    operationId: 'writeOffLoan',
    summary: 'Write a loan off',
    description:
      'An operator ends an `active` loan as a loss: the principal still owed moves from the loan receivable to loan losses through the ledger; unpaid interest, fees and penalty (never booked as income) are recorded as forgone in the evidence with the reason. Emits `loan.written_off`.',
    params: loanIdParams,
    body: closedObjectSchema(
      { reason: { type: 'string', minLength: 1, maxLength: LOAN_WRITE_OFF_REASON_CHARS_MAX } },
      ['reason'],
    ),
    responses: { 200: written('Loan', 'The loan, written off.') },
  });
}
