/**
 * Savings products and savings accounts: products (terms and effective-dated rates), accounts (wallets of a
 * product), their daily accruals, withdrawal notices and withdrawals.
 */
import { routesInOrder } from '../../../http/routeOrder.ts';
import { savingsAccountRoutes } from './accounts.ts';
import { savingsProductRoutes } from './products.ts';
import { savingsWithdrawalRoutes } from './withdrawals.ts';

export const savingsRoutes = routesInOrder(
  savingsProductRoutes,
  savingsAccountRoutes,
  savingsWithdrawalRoutes,
);
