/**
 * Lending routes: loan products, and loans (application, disbursement, repayments, write-off). The
 * schedule, the arrears and every amount are computed in src/modules/lending/domain.ts; money moves through the
 * posting module (src/modules/lending/useCases.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { loanApplicationRoutes, writeOffLoanRoute } from './loans.ts';
import { loanProductRoutes } from './products.ts';
import { loanRepaymentRoutes } from './repayments.ts';

export function loanRoutes(app: FastifyInstance, deps: Deps): void {
  loanProductRoutes(app, deps);
  loanApplicationRoutes(app, deps);
  loanRepaymentRoutes(app, deps);
  writeOffLoanRoute(app, deps);
}
