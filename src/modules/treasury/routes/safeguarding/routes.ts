/**
 * Safeguarding: trust accounts (admins configure them), the closing balances their bank statements report
 * and the daily reports comparing them with customer money (operators: the `compliance` scope). Sweeps
 * between a rail's float and the trust account are `safeguardingSweepRoutes` (sweeps.ts).
 */
import { routesInOrder } from '../../../../http/routeOrder.ts';
import { safeguardingBalanceRoutes } from './balances.ts';
import { safeguardingReportRoutes } from './reports.ts';
import { trustAccountRoutes } from './trustAccounts.ts';

export const safeguardingRoutes = routesInOrder(
  trustAccountRoutes,
  safeguardingBalanceRoutes,
  safeguardingReportRoutes,
);
