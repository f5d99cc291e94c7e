/**
 * Savings products and accounts: effective-dated rates, daily accrual and monthly capitalisation, withdrawal notices and withdrawals, and the guard that keeps money from leaving a savings account any other way.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { savingsRoutes } from './routes/routes.ts';
import { SAVINGS_SCHEMAS } from './routes/schemas.ts';

export { savingsRoutes } from './routes/routes.ts';
export {
  SAVINGS_SCHEMAS,
  savingsAccountSchema,
  savingsNoticeSchema,
  savingsWithdrawalSchema,
} from './routes/schemas.ts';
export { SAVINGS_DAY_WORK } from './useCases/dayWork.ts';
export { refuseSavingsSource } from './useCases/sourceGuard.ts';

/** The module's face on the HTTP edge. */
export const savingsHttp: HttpModule = { schemas: SAVINGS_SCHEMAS, routes: savingsRoutes };
