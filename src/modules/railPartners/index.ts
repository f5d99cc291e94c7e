/**
 * Rail partners: an organization's contracted partners (M-Pesa Daraja, MTN MoMo) with their settings and
 * sealed credentials, each partner's adapter built per process behind a circuit breaker and a token bucket,
 * partners' callbacks stored, then applied once (unknown or contradicting ones to the exception queue), and
 * payers' own payments (M-Pesa C2B) validated against and credited to the wallet their reference names;
 * and operators' reversals of settled payouts through the partner that paid them.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { balanceQueryRoutes, railPartnerBalanceQuerySchema } from './routes/balanceQueries.ts';
import { railCallbackRoutes } from './routes/callbacks.ts';
import { creditUrlsRoute } from './routes/creditUrls.ts';
import { railPartnerCallRoutes, railPartnerCallSchema } from './routes/partnerCalls.ts';
import { railPartnerRoutes } from './routes/partners.ts';
import { transferReversalSchema } from './routes/reversalSchema.ts';
import { reversalRoutes } from './routes/reversals.ts';
import { sandboxBankTransferRoutes, sandboxBankTransferSchema } from './routes/sandboxBankTransfers.ts';
import { railCallbackSchema, railPartnerCreditUrlsSchema, railPartnerSchema } from './routes/schemas.ts';
import { walletAccountNumberRoutes } from './routes/walletAccountNumbers.ts';

export {
  CUSTODY_DEPOSIT_POLL_INTERVAL_MS,
  CUSTODY_RESERVE_POLL_INTERVAL_MS,
  CUSTODY_SWEEP_INTERVAL_MS,
  runCustodyDepositPollOnce,
  runCustodyReservePassOnce,
  runCustodySweepPassOnce,
} from './custodyWorkers.ts';
export { marketsCarriedBy, RAIL_PARTNER_SHAPES, RAIL_PARTNERS, type RailPartnerName } from './domain.ts';
export { PARTNER_RAIL_FACTORIES } from './partners/factories.ts';
export { fireblocksRequest } from './partners/fireblocks/connection.ts';
export {
  railPartnerConfigsNotWrappedBy,
  railPartnerCredentialKeyIds,
  updateRailPartnerConfig,
} from './repository/partners.ts';
export { railPartnerBalanceQuerySchema } from './routes/balanceQueries.ts';
export { railCallbackRoutes } from './routes/callbacks.ts';
export { railPartnerRoutes } from './routes/partners.ts';
export { transferReversalSchema } from './routes/reversalSchema.ts';
export { railCallbackSchema, railPartnerSchema } from './routes/schemas.ts';
export { custodyDepositAddress } from './useCases/custody.ts';
export { type RailPartnerDirectory, railPartnerDirectory } from './useCases/directory.ts';
export {
  RAIL_PARTNER_HEALTH_WINDOW_HOURS,
  type RailPartnerHealth,
  railPartnerHealth,
} from './useCases/health.ts';
export { preparePayoutNetworkFee } from './useCases/networkFees.ts';
export {
  callbackBaseUrl,
  configureRailPartner,
  ensureSimulatedRailPartner,
  updateRailPartner,
} from './useCases/partners.ts';
export { REVERSAL_REASON_MAX_CHARS, requestReversal } from './useCases/reversals.ts';
export {
  RAIL_CALLBACK_SWEEP_INTERVAL_MS,
  RAIL_CREDIT_VERIFICATION_WORKER_INTERVAL_MS,
  RAIL_REVERSAL_WORKER_INTERVAL_MS,
  runRailCallbackSweepOnce,
  runRailCreditVerificationWorkerOnce,
  runRailReversalWorkerOnce,
} from './workers.ts';

/** The module's face on the HTTP edge: partners' configuration, and the callback endpoints partners call. */
export const railPartnersHttp: HttpModule = {
  schemas: [
    railPartnerSchema,
    railCallbackSchema,
    railPartnerCreditUrlsSchema,
    transferReversalSchema,
    railPartnerBalanceQuerySchema,
    railPartnerCallSchema,
  ],
  routes: (app, deps) => {
    railPartnerRoutes(app, deps);
    creditUrlsRoute(app, deps);
    railCallbackRoutes(app, deps);
    reversalRoutes(app, deps);
    balanceQueryRoutes(app, deps);
    walletAccountNumberRoutes(app, deps);
    railPartnerCallRoutes(app, deps);
  },
};

/** The sandbox's bank transfers sent from outside through the bank partner's simulator. */
export const railPartnersSandboxHttp: HttpModule = {
  schemas: [sandboxBankTransferSchema],
  routes: sandboxBankTransferRoutes,
  sandboxOnly: true,
};
