/**
 * Loans: products, applications decided by policy and approval, disbursement, repayments, the daily collection, arrears and penalty, and write-off.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { loanRoutes } from './routes/routes.ts';
import { LOAN_SCHEMAS } from './routes/schemas.ts';

export { loanRoutes } from './routes/routes.ts';
export { LOAN_SCHEMAS } from './routes/schemas.ts';
export { LOAN_APPROVALS } from './useCases/applications.ts';
export { LOAN_DAY_WORK } from './useCases/dayWork.ts';

/** The module's face on the HTTP edge. */
export const lendingHttp: HttpModule = { schemas: LOAN_SCHEMAS, routes: loanRoutes };
