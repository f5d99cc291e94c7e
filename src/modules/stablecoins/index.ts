/**
 * Stablecoins: deposit addresses per wallet and network, on-chain deposits counted to their confirmations
 * (held for review when their Travel Rule data is missing), conversion rates with their band, quotes and
 * conversions between a fiat wallet and a stablecoin wallet; the sandbox's simulated chain.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { STABLECOIN_SCHEMAS, stablecoinRoutes } from './routes/routes.ts';
import { sandboxChainRoutes, sandboxCustodyDepositSchema } from './routes/sandboxChain.ts';

export { findCustodyDeposit, recordCustodyDeposit } from './useCases/chainDeposits.ts';
export {
  applyRateChange,
  planRateChange,
  RATE_BAND_APPROVAL,
  RATE_BAND_RULE_ID,
} from './useCases/conversionRates.ts';
export { decideHeldDeposit } from './useCases/deposits.ts';
export { DEPOSIT_WORKER_INTERVAL_MS, runDepositWorkerOnce } from './workers.ts';

/** The module's face on the HTTP edge. */
export const stablecoinsHttp: HttpModule = { schemas: STABLECOIN_SCHEMAS, routes: stablecoinRoutes };

/** The sandbox's simulated chain: blocks advanced and deposits reorganised on request; custodied deposits sent. */
export const stablecoinsSandboxHttp: HttpModule = {
  schemas: [sandboxCustodyDepositSchema],
  routes: sandboxChainRoutes,
  sandboxOnly: true,
};
