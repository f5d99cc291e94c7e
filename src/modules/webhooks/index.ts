/**
 * Webhooks: subscriptions with their sealed, rotating signing secrets and URL rules, the dispatcher that claims, signs and sends deliveries with retries, redelivery and recovery, test events, and copying sandbox subscriptions into pilot or production. Events reach it through the core's outbox.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { webhookRoutes } from './routes/routes.ts';

export type { AttemptRecord } from './repository/deliveries.ts';
export type { DeliveryView } from './repository/deliveryLog.ts';
export {
  legacySecrets,
  saveSealedSecret,
  secretKeyIds,
  secretsNotWrappedBy,
} from './repository/secrets.ts';
export { findSubscription } from './repository/subscriptions.ts';
export { presentDelivery, presentSubscription } from './routes/presenters.ts';
export { webhookRoutes } from './routes/routes.ts';
export { eventDeliveries, recoverSubscription, redeliverEvent } from './useCases/deliveries.ts';
export { type PromotionResult, promoteSandboxSubscriptions } from './useCases/promotion.ts';
export {
  getSubscription,
  listSubscriptions,
  rotateSubscriptionSecret,
  sealWebhookSecret,
  setOrganizationWebhooks,
  WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX,
} from './useCases/subscriptions.ts';
export { emitTestEvent } from './useCases/testEvents.ts';
export { startWebhookDispatcher } from './workers/dispatcher.ts';
export { httpWebhookSender } from './workers/httpSender.ts';

/** The module's face on the HTTP edge. */
export const webhooksHttp: HttpModule = { schemas: [], routes: webhookRoutes };
