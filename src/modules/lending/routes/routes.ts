/**
 * Lending routes: loan products, and loans (application, disbursement, repayments, write-off). The
 * schedule, the arrears and every amount are computed in src/modules/lending/domain.ts; money moves through the
 * posting module (src/modules/lending/useCases.ts).
 */
import { routesInOrder } from '../../../http/routeOrder.ts';
import { loanApplicationRoutes, writeOffLoanRoute } from './loans.ts';
import { loanProductRoutes } from './products.ts';
import { loanRepaymentRoutes } from './repayments.ts';

export const loanRoutes = routesInOrder(
  loanProductRoutes,
  loanApplicationRoutes,
  loanRepaymentRoutes,
  writeOffLoanRoute,
);
