/**
 * Webhook subscriptions: created, read, changed, removed and their secrets rotated, each write one
 * transaction; their secrets sealed with the master keys; the operator's switch.
 */
import type { Deps } from '../../../app/deps.ts';
import { listPage } from '../../../app/reads.ts';
import { resourceMissing } from '../../../domain/errors.ts';
import { PAYLOAD_VERSION_LATEST } from '../../../domain/payloadVersions.ts';
import { seal, sealedKeyId } from '../../../domain/sealing.ts';
import { formatWebhookSecret, WEBHOOK_SECRET_RANDOM_BYTES } from '../../../domain/signing.ts';
import {
  type PayloadFormat,
  type SubscriptionStatus,
  secretsBeyondSigningBound,
  WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT,
  webhookSecretContext,
} from '../../../domain/webhooks.ts';
import { setWebhookSubscriptionsEnabled } from '../../../store/repositories/organizations.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  liveSecrets,
  openStoredSecret,
  retireSecrets,
  rotateSecret,
  type SealedSecret,
} from '../repository/secrets.ts';
import {
  deleteSubscription,
  findSubscription,
  insertSubscription,
  listSubscriptions as listSubscriptionRows,
  type Subscription,
  saveSubscription,
} from '../repository/subscriptions.ts';
import { type CheckedWebhookUrl, checkApiVersion, checkEvents, movedForward } from './checks.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { Subscription } from '../repository/subscriptions.ts';

export interface SubscriptionInput {
  url: string;
  events: string[];
  description?: string | undefined;
  payload_format?: PayloadFormat | undefined;
  /** The payload version to pin; the newest when absent. */
  api_version?: string | undefined;
}

export async function createSubscription(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: SubscriptionInput & { url: CheckedWebhookUrl },
): Promise<{ subscription: Subscription; secret: string }> {
  const now = deps.now();
  const subscription: Subscription = {
    id: deps.newId('webhookSubscription'),
    organizationId,
    url: input.url,
    events: checkEvents(input.events),
    description: input.description ?? null,
    payloadFormat: input.payload_format ?? 'snake_case',
    apiVersion: input.api_version === undefined ? PAYLOAD_VERSION_LATEST : checkApiVersion(input.api_version),
    status: 'enabled',
    disabledReason: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  };
  const secret = formatWebhookSecret(deps.randomBytes(WEBHOOK_SECRET_RANDOM_BYTES));
  await insertSubscription(tx, subscription, sealWebhookSecret(deps, subscription.id, secret));
  return { subscription, secret };
}

/** The operator's switch (`mkoba orgs set-webhooks`); undefined when there is no such organization. */
export async function setOrganizationWebhooks(
  deps: Deps,
  organizationId: string,
  enabled: boolean,
): Promise<{ name: string; enabled: boolean } | undefined> {
  const organization = await setWebhookSubscriptionsEnabled(deps.store, organizationId, enabled);
  return organization && { name: organization.name, enabled: organization.webhookSubscriptionsEnabled };
}

export async function getSubscription(
  db: Queryable,
  organizationId: string,
  id: string,
  forUpdate = false,
): Promise<Subscription> {
  const subscription = await findSubscription(db, organizationId, id, { forUpdate });
  if (!subscription) throw resourceMissing('webhook subscription', id);
  return subscription;
}

export const listSubscriptions = listPage(listSubscriptionRows);

export interface SubscriptionUpdate {
  url?: string | undefined;
  events?: string[];
  description?: string | null;
  payload_format?: PayloadFormat;
  /** Forward only. */
  api_version?: string;
  status?: SubscriptionStatus;
}

export async function updateSubscription(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  update: SubscriptionUpdate & { url?: CheckedWebhookUrl | undefined },
): Promise<Subscription> {
  const { url } = update;
  const current = await getSubscription(tx, organizationId, id, true);
  const enabling = update.status === 'enabled' && current.status === 'disabled';
  const next: Subscription = {
    ...current,
    url: url ?? current.url,
    events: update.events === undefined ? current.events : checkEvents(update.events),
    description: update.description === undefined ? current.description : update.description,
    payloadFormat: update.payload_format ?? current.payloadFormat,
    apiVersion:
      update.api_version === undefined
        ? current.apiVersion
        : movedForward(current.apiVersion, update.api_version),
    status: update.status ?? current.status,
    // Re-enabling starts a fresh failure window; disabling by hand records why.
    disabledReason:
      update.status === 'disabled' ? 'disabled_by_request' : enabling ? null : current.disabledReason,
    failingSince: enabling ? null : current.failingSince,
    updatedAt: deps.now(),
  };
  await saveSubscription(tx, next);
  return next;
}

export async function removeSubscription(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<Subscription> {
  const current = await getSubscription(tx, organizationId, id, true);
  await deleteSubscription(tx, id, deps.now());
  return current;
}

export const WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX = 7 * 24;

/** A secret that stopped signing before its grace period ended, as a rotation reports it. */
export interface RetiredSecret {
  createdAt: Date;
  /** The secret's last four characters, so its holder can tell which one it was. */
  last4: string;
}

/**
 * A new secret, returned once; the old one keeps signing alongside it for the grace period. At most
 * WEBHOOK_SIGNING_SECRETS_MAX secrets sign at once: a rotation past that bound retires the oldest live ones
 * at once, and returns them.
 */
export async function rotateSubscriptionSecret(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  graceHours = WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT,
): Promise<{
  subscription: Subscription;
  secret: string;
  previousSecretExpiresAt: Date;
  retiredEarly: RetiredSecret[];
}> {
  const subscription = await getSubscription(tx, organizationId, id, true);
  const now = deps.now();
  const graceUntil = new Date(now.getTime() + graceHours * 3_600_000);
  const secret = formatWebhookSecret(deps.randomBytes(WEBHOOK_SECRET_RANDOM_BYTES));
  await rotateSecret(tx, id, sealWebhookSecret(deps, id, secret), now, graceUntil);
  const retired = secretsBeyondSigningBound(await liveSecrets(tx, id, now));
  await retireSecrets(
    tx,
    retired.map((r) => r.id),
    now,
  );
  return {
    subscription,
    secret,
    previousSecretExpiresAt: graceUntil,
    retiredEarly: retired.map((r) => ({
      createdAt: r.createdAt,
      last4: openStoredSecret(deps.keyring, r).slice(-4),
    })),
  };
}

export function sealWebhookSecret(deps: Deps, subscriptionId: string, secret: string): SealedSecret {
  const sealed = seal(deps.keyring, secret, webhookSecretContext(subscriptionId), deps.randomBytes);
  return { keyId: sealedKeyId(sealed), sealed };
}
