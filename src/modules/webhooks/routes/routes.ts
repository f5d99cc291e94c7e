/** Webhook subscriptions (at the spec's unversioned path and under /v1), delivery logs and recovery. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { deliveryRoutes } from './deliveries.ts';
import { deliverySchema, subscriptionSchema } from './schemas.ts';
import { subscriptionRoutes } from './subscriptions.ts';

export function webhookRoutes(app: FastifyInstance, deps: Deps): void {
  app.addSchema(subscriptionSchema);
  app.addSchema(deliverySchema);
  subscriptionRoutes(app, deps);
  deliveryRoutes(app, deps);
}
