/** Every treasury route but the sandbox's: bank deposits, reconciliation, and safeguarding with its sweeps. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { bankDepositRoutes } from './bankDeposits.ts';
import { reconciliationRoutes } from './reconciliation.ts';
import { safeguardingRoutes } from './safeguarding/routes.ts';
import { safeguardingSweepRoutes } from './safeguarding/sweeps.ts';

export function treasuryRoutes(app: FastifyInstance, deps: Deps): void {
  bankDepositRoutes(app, deps);
  reconciliationRoutes(app, deps);
  safeguardingRoutes(app, deps);
  safeguardingSweepRoutes(app, deps);
}
