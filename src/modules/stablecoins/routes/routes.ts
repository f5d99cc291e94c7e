/**
 * Stablecoin routes: deposit addresses per wallet and network, deposits, conversion rates, quotes and
 * conversions (mint and redeem), each in stablecoins/ with the schemas and presenters beside them. The
 * sandbox's simulated chain has its own routes (sandboxChain.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { conversionRoutes } from './conversions.ts';
import { depositRoutes } from './deposits.ts';
import { conversionRateRoutes } from './rates.ts';

export { STABLECOIN_SCHEMAS } from './schemas.ts';

export function stablecoinRoutes(app: FastifyInstance, deps: Deps): void {
  depositRoutes(app, deps);
  conversionRateRoutes(app, deps);
  conversionRoutes(app, deps);
}
