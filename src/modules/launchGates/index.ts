/**
 * Launch gates: the checks an organization passes in the sandbox before pilot or production keys are issued, evaluated from the sandbox's facts, each change recorded with its event and evidence; pilot and production read that record and add their overrides.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { launchGateRoutes, launchGateSchema } from './routes.ts';

export { LAUNCH_GATES, type LaunchGate, type LaunchGateView } from './domain.ts';
export { railProviderGatesBeside } from './providerGate.ts';
export { type ProviderGateDecision, RAIL_PROVIDERS_GATE } from './providers.ts';
export { launchGateRoutes, launchGateSchema } from './routes.ts';
export {
  launchGatesOf,
  overrideLaunchGates,
  overrideLaunchGatesFor,
  requireLaunchGatesPassed,
} from './useCases.ts';
export { LAUNCH_GATE_WORKER_INTERVAL_MS, launchGateWalker } from './workers.ts';

/** The module's face on the HTTP edge. */
export const launchGatesHttp: HttpModule = { schemas: [launchGateSchema], routes: launchGateRoutes };
