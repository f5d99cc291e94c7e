/** Every treasury route but the sandbox's: bank deposits, reconciliation, and safeguarding with its sweeps. */
import { routesInOrder } from '../../../http/routeOrder.ts';
import { bankDepositRoutes } from './bankDeposits.ts';
import { reconciliationRoutes } from './reconciliation.ts';
import { safeguardingRoutes } from './safeguarding/routes.ts';
import { safeguardingSweepRoutes } from './safeguarding/sweeps.ts';

export const treasuryRoutes = routesInOrder(
  bankDepositRoutes,
  reconciliationRoutes,
  safeguardingRoutes,
  safeguardingSweepRoutes,
);
