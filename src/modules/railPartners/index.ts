/**
 * Rail partners: an organization's contracted partners (M-Pesa Daraja, MTN MoMo) with their settings and
 * sealed credentials, each partner's adapter built per process behind a circuit breaker and a token bucket,
 * and partners' callbacks stored, then applied once (unknown or contradicting ones to the exception queue).
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { railCallbackRoutes } from './routes/callbacks.ts';
import { railPartnerRoutes } from './routes/partners.ts';
import { railCallbackSchema, railPartnerSchema } from './routes/schemas.ts';

export { CUSTODY_DEPOSIT_POLL_INTERVAL_MS, runCustodyDepositPollOnce } from './custodyWorkers.ts';
export { PARTNER_RAIL_FACTORIES } from './partners/factories.ts';
export {
  railPartnerConfigsNotWrappedBy,
  railPartnerCredentialKeyIds,
  updateRailPartnerConfig,
} from './repository/partners.ts';
export { railCallbackRoutes } from './routes/callbacks.ts';
export { railPartnerRoutes } from './routes/partners.ts';
export { railCallbackSchema, railPartnerSchema } from './routes/schemas.ts';
export { custodyDepositAddress } from './useCases/custody.ts';
export { type RailPartnerDirectory, railPartnerDirectory } from './useCases/directory.ts';
export { configureRailPartner, ensureSimulatedRailPartner, updateRailPartner } from './useCases/partners.ts';
export { RAIL_CALLBACK_SWEEP_INTERVAL_MS, runRailCallbackSweepOnce } from './workers.ts';

/** The module's face on the HTTP edge: partners' configuration, and the callback endpoints partners call. */
export const railPartnersHttp: HttpModule = {
  schemas: [railPartnerSchema, railCallbackSchema],
  routes: (app, deps) => {
    railPartnerRoutes(app, deps);
    railCallbackRoutes(app, deps);
  },
};
