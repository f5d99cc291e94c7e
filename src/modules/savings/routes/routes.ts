/**
 * Savings products and savings accounts: products (terms and effective-dated rates), accounts (wallets of a
 * product), their daily accruals, withdrawal notices and withdrawals.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { savingsAccountRoutes } from './accounts.ts';
import { savingsProductRoutes } from './products.ts';
import { savingsWithdrawalRoutes } from './withdrawals.ts';

export function savingsRoutes(app: FastifyInstance, deps: Deps): void {
  savingsProductRoutes(app, deps);
  savingsAccountRoutes(app, deps);
  savingsWithdrawalRoutes(app, deps);
}
