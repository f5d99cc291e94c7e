/**
 * Compliance: KYC and KYB verifications (through the organization's verification provider, Smile ID or the
 * sandbox's, with the worker that sends and polls Smile ID's jobs and the route its callbacks come to), sanctions lists and the screening of parties against them, AML rules as data and the
 * alerts they open, the review queue of held transfers and deposits, customers' risk levels, and the Travel
 * Rule with the approved digital-asset routes. The pure decisions the money seam makes with them (AML, the
 * Travel Rule, a new transfer's compliance) are the core's, src/domain/decisions/.
 * Other modules, the composition root and the edges import this file only.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import type { HttpModule } from '../../http/httpModule.ts';
import { amlRoutes } from './routes/aml.ts';
import { reviewRoutes } from './routes/reviews.ts';
import { COMPLIANCE_SCHEMAS, VERIFICATION_DOCUMENT_SCHEMAS } from './routes/schemas.ts';
import { smileIdCallbackRoutes } from './routes/smileIdCallbacks.ts';
import { travelRuleRoutes } from './routes/travelRule.ts';
import { TRAVEL_RULE_SCHEMAS } from './routes/travelRuleSchemas.ts';
import {
  verificationProviderCallSchema,
  verificationProviderRoutes,
  verificationProviderSchema,
} from './routes/verificationProvider.ts';
import { verificationRoutes } from './routes/verifications.ts';

export { insertReviewCases } from './repository/reviews.ts';
export { lockRoutesWithDayUsage } from './repository/travelRule.ts';
export { findVerifiedCountry } from './repository/verifications.ts';
export { presentAmlAlert, presentReview } from './routes/presenters.ts';
export { textSchema } from './routes/schemas.ts';
export { presentTravelRuleRecord, TRAVEL_RULE_TAGS } from './routes/travelRule.ts';
export { travelRuleRequestSchema } from './routes/travelRuleSchemas.ts';
export {
  AML_ALERT_NOTE_LENGTH_MAX,
  type AmlAlertDraft,
  listAlerts,
  openAmlAlerts,
  resolveAmlAlert,
} from './useCases/aml/alerts.ts';
export { createRule, loadAmlRules, updateRule } from './useCases/aml/rules.ts';
export { requireApprovedRoute, routeLimitRefusal, setRouteStatus } from './useCases/digitalAssetRoutes.ts';
export { decideReview, listReviews } from './useCases/reviews.ts';
export {
  importSanctionsList,
  listSanctionsListVersions,
  type SanctionsImportProgress,
  type SanctionsImportSummary,
} from './useCases/sanctions/importList.ts';
export { seedSampleSanctionsList } from './useCases/sanctions/sampleList.ts';
export { watchSanctionsList } from './useCases/sanctions/screeningIndex.ts';
export { seedVerifiedCustomers } from './useCases/seedVerifications.ts';
export {
  configureSmileId,
  openSmileIdApiKey,
  type SmileIdConfigInput,
  smileIdCallbackUrl,
} from './useCases/smileId/config.ts';
export {
  runSmileIdJobsOnce,
  SMILE_ID_DECIDER,
  SMILE_ID_POLL_AFTER_MS,
  SMILE_ID_RETRY_AFTER_MS,
} from './useCases/smileId/jobs.ts';
export { removeSmileId } from './useCases/smileId/removal.ts';
export { screenCounterparty } from './useCases/transferScreening.ts';
export {
  getTravelRuleSettings,
  prepareTravelRule,
  type TravelRuleSettingsView,
  travelRuleRecordOf,
  travelRuleSettingsIn,
} from './useCases/travelRule.ts';
export {
  runSmileIdWorkerOnce,
  runVerificationWorkerOnce,
  SMILE_ID_WORKER_INTERVAL_MS,
  VERIFICATION_WORKER_INTERVAL_MS,
} from './workers/verifications.ts';

/** The module's face on the HTTP edge: verifications, reviews, AML and the Travel Rule. */
export const complianceHttp: HttpModule = {
  schemas: [
    ...COMPLIANCE_SCHEMAS,
    ...TRAVEL_RULE_SCHEMAS,
    verificationProviderSchema,
    verificationProviderCallSchema,
  ],
  documentComponents: VERIFICATION_DOCUMENT_SCHEMAS,
  routes(app: FastifyInstance, deps: Deps) {
    verificationRoutes(app, deps);
    smileIdCallbackRoutes(app, deps);
    verificationProviderRoutes(app, deps);
    reviewRoutes(app, deps);
    amlRoutes(app, deps);
    travelRuleRoutes(app, deps);
  },
};
