/**
 * Webhooks: subscriptions with their sealed, rotating signing secrets and URL rules, the dispatcher that claims, signs and sends deliveries with retries, redelivery and recovery, test events, and copying sandbox subscriptions into pilot or production. Events reach it through the core's outbox.
 * Other modules, the composition root and the edges import this file only.
 */
import type { HttpModule } from '../../http/httpModule.ts';
import { webhookRoutes } from './routes/routes.ts';

export {
  type AttemptRecord,
  type DeliveryView,
  findSubscription,
  legacySecrets,
  saveSealedSecret,
  secretKeyIds,
  secretsNotWrappedBy,
} from './repository.ts';
export { presentDelivery, presentSubscription } from './routes/presenters.ts';
export { webhookRoutes } from './routes/routes.ts';
export { type PromotionResult, promoteSandboxSubscriptions } from './useCases/promotion.ts';
export {
  emitTestEvent,
  eventDeliveries,
  getSubscription,
  listSubscriptions,
  recoverSubscription,
  redeliverEvent,
  rotateSubscriptionSecret,
  sealWebhookSecret,
  setOrganizationWebhooks,
  WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX,
} from './useCases/subscriptions.ts';
export { startWebhookDispatcher } from './workers/dispatcher.ts';
export { httpWebhookSender } from './workers/httpSender.ts';

/** The module's face on the HTTP edge. */
export const webhooksHttp: HttpModule = { schemas: [], routes: webhookRoutes };
