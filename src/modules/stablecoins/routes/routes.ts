/**
 * Stablecoin routes: deposit addresses per wallet and network, deposits, conversion rates, quotes and
 * conversions (mint and redeem), each in stablecoins/ with the schemas and presenters beside them. The
 * sandbox's simulated chain has its own routes (sandboxChain.ts).
 */
import { routesInOrder } from '../../../http/routeOrder.ts';
import { conversionRoutes } from './conversions.ts';
import { depositRoutes } from './deposits.ts';
import { conversionRateRoutes } from './rates.ts';

export { STABLECOIN_SCHEMAS } from './schemas.ts';

export const stablecoinRoutes = routesInOrder(depositRoutes, conversionRateRoutes, conversionRoutes);
