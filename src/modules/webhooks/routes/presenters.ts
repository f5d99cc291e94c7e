/** Subscriptions and deliveries in their wire form, for the API and the console. */

import { isoOrNull } from '../../../http/presenters.ts';
import type { DeliveryView } from '../useCases/deliveries.ts';
import type { RetiredSecret, Subscription } from '../useCases/subscriptions.ts';

export function presentSubscription(
  s: Subscription,
  extra: { secret?: string; previousSecretExpiresAt?: Date; retiredEarly?: RetiredSecret[] } = {},
) {
  return {
    id: s.id,
    object: 'webhook_subscription',
    url: s.url,
    events: s.events,
    description: s.description,
    payload_format: s.payloadFormat,
    api_version: s.apiVersion,
    status: s.status,
    disabled_reason: s.disabledReason,
    ...(extra.secret ? { secret: extra.secret } : {}),
    ...(extra.previousSecretExpiresAt
      ? { previous_secret_expires_at: extra.previousSecretExpiresAt.toISOString() }
      : {}),
    ...(extra.retiredEarly
      ? {
          secrets_retired_early: extra.retiredEarly.map((r) => ({
            last4: r.last4,
            created_at: r.createdAt.toISOString(),
          })),
        }
      : {}),
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

export function presentDelivery(d: DeliveryView) {
  return {
    id: d.id,
    object: 'webhook_delivery',
    event: d.eventId,
    subscription: d.subscriptionId,
    status: d.status,
    attempts: d.attempts,
    // A finished delivery is due for nothing: its stored time is only when it finished.
    next_attempt_at:
      d.status === 'pending' || d.status === 'delivering' ? d.nextAttemptAt.toISOString() : null,
    last_attempt_at: isoOrNull(d.lastAttemptAt),
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    succeeded_at: isoOrNull(d.succeededAt),
    created_at: d.createdAt.toISOString(),
    attempt_log: d.log.map((a) => ({
      attempt: a.attempt,
      started_at: a.startedAt.toISOString(),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      error_class: a.errorClass,
      response_body: a.responseBody,
    })),
  };
}
