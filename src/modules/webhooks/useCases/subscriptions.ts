/** Webhook subscriptions and recovery: each write one transaction. */

import { approvalEventData } from '../../../app/approvals.ts';
import type { Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import type { Approval } from '../../../domain/approvals.ts';
import { AppError, resourceMissing, validationError } from '../../../domain/errors.ts';
import {
  EVENT_TYPES,
  type EventRecord,
  type EventType,
  transferEventData,
  walletEventData,
} from '../../../domain/events.ts';
import { type Page, type PageRequest, toPage } from '../../../domain/pagination.ts';
import {
  isBefore,
  isPayloadVersion,
  PAYLOAD_VERSION_LATEST,
  PAYLOAD_VERSIONS,
  type PayloadVersion,
} from '../../../domain/payloadVersions.ts';
import { seal, sealedKeyId } from '../../../domain/sealing.ts';
import { formatWebhookSecret, WEBHOOK_SECRET_RANDOM_BYTES } from '../../../domain/signing.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import type { Wallet } from '../../../domain/wallets.ts';
import {
  checkResolvedAddresses,
  checkWebhookUrl,
  isIpAddress,
  type PayloadFormat,
  type SubscriptionStatus,
  secretsBeyondSigningBound,
  urlHost,
  WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT,
  type WebhookAddressPolicy,
  webhookSecretContext,
} from '../../../domain/webhooks.ts';
import { resolveWithin as resolveHostWithin } from '../../../outbound/guard.ts';
import { findEvent } from '../../../store/repositories/events.ts';
import {
  findOrganization,
  setWebhookSubscriptionsEnabled,
} from '../../../store/repositories/organizations.ts';
import type { Queryable } from '../../../store/store.ts';
import { listDeliveriesOfEvent } from '../repository/deliveryLog.ts';
import { eventsSince, requeueDeliveries } from '../repository/requeue.ts';
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

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { DeliveryView } from '../repository/deliveryLog.ts';
export type { Subscription } from '../repository/subscriptions.ts';

/** Events one recover call re-queues at most; call again with a later `since` for more. */
export const WEBHOOK_RECOVER_EVENTS_MAX = 10_000;

/**
 * A webhook URL that passed the address rules, DNS included. It is checked before the write's transaction
 * opens (see sendWrite's prepare step), so a slow or failing look-up neither holds a transaction nor is
 * recorded as the outcome of an Idempotency-Key.
 */
export type CheckedWebhookUrl = string & { readonly checkedWebhookUrl: unique symbol };

export interface SubscriptionInput {
  url: string;
  events: string[];
  description?: string | undefined;
  payload_format?: PayloadFormat | undefined;
  /** The payload version to pin; the newest when absent. */
  api_version?: string | undefined;
}

/** A known payload version, or a 400 `unknown_api_version` naming the known ones. */
function checkApiVersion(text: string): PayloadVersion {
  if (isPayloadVersion(text)) return text;
  throw new AppError({
    status: 400,
    code: 'unknown_api_version',
    title: 'Unknown API version',
    detail: `api_version ${text} is not a payload version (known: ${PAYLOAD_VERSIONS.join(', ')}).`,
    param: 'api_version',
  });
}

/** A pinned version moves forward only: a receiver built for a newer shape is never handed an older one. */
function movedForward(current: PayloadVersion, text: string): PayloadVersion {
  const next = checkApiVersion(text);
  if (isBefore(next, current)) {
    throw new AppError({
      status: 409,
      code: 'api_version_downgrade',
      title: 'API version cannot move back',
      detail: `The subscription is pinned to ${current}; its api_version may only move forward (to ${current} or later).`,
      param: 'api_version',
    });
  }
  return next;
}

/** The event types named that this deployment does not know (`*` is every type). */
export function unknownEventTypes(events: readonly string[]): string[] {
  return events.filter((e) => e !== '*' && !(EVENT_TYPES as readonly string[]).includes(e));
}

function checkEvents(events: readonly string[]): string[] {
  const unknown = unknownEventTypes(events);
  if (unknown.length > 0) {
    throw validationError(
      'events',
      `unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')}, or '*')`,
      'invalid_value',
    );
  }
  return [...new Set(events)];
}

/** How long production waits for a webhook URL's host name to resolve at subscription time. */
export const WEBHOOK_URL_RESOLVE_TIMEOUT_MS = 5_000;

function invalidUrl(reason: string): AppError {
  return validationError('url', `url ${reason}`, 'invalid_url');
}

async function resolveWithin(deps: Deps, host: string): Promise<string[]> {
  const resolve = deps.resolveHost;
  if (!resolve) return [];
  try {
    return await resolveHostWithin(resolve, host, WEBHOOK_URL_RESOLVE_TIMEOUT_MS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw invalidUrl(`host ${host} does not resolve (${code ?? (error as Error).message})`);
  }
}

function addressPolicy(deps: Deps): WebhookAddressPolicy {
  return deps.allowPrivateWebhookUrls && deps.environment === 'sandbox' ? 'allow_private' : 'public_only';
}

/** In the sandbox, a URL refused only for its address says how local development gets it accepted. */
function sandboxHint(deps: Deps, url: string): string {
  return deps.environment === 'sandbox' && checkWebhookUrl(url, 'allow_private').ok
    ? ' (for local development, start the sandbox with MKOBA_WEBHOOK_ALLOW_PRIVATE=1, or use mkoba listen)'
    : '';
}

/**
 * The URL's form, and unless private addresses are allowed, where its host name points now: every address
 * must be public. The sender checks again at each connect, since DNS can change after this (rebinding).
 * Runs with no transaction open.
 */
export async function checkSubscriptionUrl(deps: Deps, url: string): Promise<CheckedWebhookUrl> {
  const policy = addressPolicy(deps);
  const verdict = checkWebhookUrl(url, policy);
  if (!verdict.ok) throw invalidUrl(`${verdict.reason}${sandboxHint(deps, url)}`);
  const checked = url as CheckedWebhookUrl;
  if (policy === 'allow_private' || !deps.resolveHost) return checked;
  const host = urlHost(new URL(url));
  if (isIpAddress(host)) return checked;
  const resolved = checkResolvedAddresses(host, await resolveWithin(deps, host));
  if (!resolved.ok) throw invalidUrl(`${resolved.reason}${sandboxHint(deps, url)}`);
  return checked;
}

/** 403 unless the operator has enabled webhook subscriptions for the organization. */
export async function ensureSubscriptionsEnabled(deps: Deps, organizationId: string): Promise<void> {
  const organization = await findOrganization(deps.store, organizationId);
  if (organization?.webhookSubscriptionsEnabled) return;
  throw new AppError({
    status: 403,
    code: 'subscriptions_not_enabled',
    title: 'Webhook subscriptions not enabled',
    detail: `Webhook subscriptions are not enabled for organization ${organizationId}. They are enabled per organization by the operator; ask them to enable yours.`,
  });
}

/**
 * What creating a subscription, or pointing one at another URL, checks before its transaction: the
 * organization manages its own subscriptions (a new URL is an endpoint nobody reviewed, as a new
 * subscription's is), and the URL is safe.
 */
export async function prepareSubscriptionUrl(
  deps: Deps,
  organizationId: string,
  url: string,
): Promise<CheckedWebhookUrl> {
  await ensureSubscriptionsEnabled(deps, organizationId);
  return checkSubscriptionUrl(deps, url);
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

export async function listSubscriptions(
  deps: Deps,
  organizationId: string,
  page: PageRequest,
): Promise<Page<Subscription>> {
  return toPage(await listSubscriptionRows(deps.store, organizationId, page, page.limit + 1), page.limit);
}

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

/** Re-queues, due now, every event since `since` that the subscription wants. */
export async function recoverSubscription(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  since: Date,
): Promise<{ subscription: Subscription; requeued: number }> {
  const subscription = await getSubscription(tx, organizationId, id, true);
  if (subscription.status !== 'enabled') {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Subscription disabled',
      detail: 'Enable the subscription before recovering its events.',
    });
  }
  const events = (await eventsSince(tx, organizationId, since, WEBHOOK_RECOVER_EVENTS_MAX)).filter(
    (e) => subscription.events.includes('*') || subscription.events.includes(e.type),
  );
  await requeueDeliveries(
    tx,
    events.map((e) => ({
      id: deps.newId('webhookDelivery'),
      organizationId,
      eventId: e.id,
      subscriptionId: id,
    })),
    deps.now(),
  );
  return { subscription, requeued: events.length };
}

/** Sends an event again now to every enabled subscription that wants its type. */
export async function redeliverEvent(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  eventId: string,
): Promise<number> {
  const event = await findEvent(tx, organizationId, eventId);
  if (!event) throw resourceMissing('event', eventId);
  const subscriptions = (await listSubscriptionRows(tx, organizationId, {}, Number.MAX_SAFE_INTEGER)).filter(
    (s) => s.status === 'enabled' && (s.events.includes('*') || s.events.includes(event.type)),
  );
  await requeueDeliveries(
    tx,
    subscriptions.map((s) => ({
      id: deps.newId('webhookDelivery'),
      organizationId,
      eventId,
      subscriptionId: s.id,
    })),
    deps.now(),
  );
  return subscriptions.length;
}

export async function eventDeliveries(deps: Deps, organizationId: string, eventId: string) {
  const event = await findEvent(deps.store, organizationId, eventId);
  if (!event) throw resourceMissing('event', eventId);
  return listDeliveriesOfEvent(deps.store, organizationId, eventId);
}

/** A sample payload for a test event of any known type (sandbox `POST /v1/sandbox/events`, `mkoba trigger`). */
export async function emitTestEvent(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  type: EventType,
): Promise<EventRecord> {
  const now = deps.now();
  const sampleTransfer: Transfer = {
    id: deps.newId('transfer'),
    organizationId,
    direction: 'outbound',
    sourceWalletId: deps.newId('wallet'),
    destination: { type: 'mobile_money', network: 'mpesa', phone: '+254700000000' },
    destinationWalletId: null,
    amountMinor: 150_000n,
    currency: 'KES',
    rail: 'mobile_money',
    network: 'mpesa',
    status: type === 'transfer.failed' ? 'failed' : type === 'transfer.settled' ? 'settled' : 'processing',
    statusReason: null,
    failureCode: type === 'transfer.failed' ? 'recipient_not_registered' : null,
    ledgerState: type === 'transfer.settled' ? 'posted' : type === 'transfer.failed' ? 'voided' : 'pending',
    metadata: { test_event: 'true' },
    railReference: null,
    nextRailCheckAt: null,
    createdAt: now,
    updatedAt: now,
    processingAt: now,
    settledAt: null,
    failedAt: null,
    canceledAt: null,
    returnedAt: null,
    createdBy: null,
    authorization: null,
    approvalId: null,
  };
  const sampleWallet: Wallet = {
    id: deps.newId('wallet'),
    organizationId,
    ownerId: deps.newId('customer'),
    currency: 'KES',
    status: type === 'wallet.frozen' ? 'frozen' : type === 'wallet.closed' ? 'closed' : 'active',
    statusReason:
      type === 'wallet.frozen'
        ? 'compliance_review'
        : type === 'wallet.closed'
          ? 'customer_request'
          : 'review_cleared',
    statusChangedAt: now,
    availableMinor: 0n,
    pendingMinor: 0n,
    currentMinor: 0n,
    metadata: {},
    accountDetails: null,
    createdAt: now,
    updatedAt: now,
  };
  const data: Record<string, unknown> = type.startsWith('transfer.')
    ? transferEventData(sampleTransfer)
    : type.startsWith('wallet.')
      ? {
          ...walletEventData(sampleWallet),
          ...(type === 'wallet.updated' ? { changed: ['metadata'], metadata: { crm_id: 'C-1' } } : {}),
          test_event: true,
        }
      : type === 'customer.updated'
        ? {
            customer_id: sampleWallet.ownerId,
            type: 'individual',
            changed: ['email'],
            kyc_status: 'verified',
            previous_kyc_status: 'verified',
            verification_required_for: [],
            tier: 1,
            test_event: true,
          }
        : type === 'customer.verification.updated'
          ? {
              verification_id: deps.newId('verification'),
              customer_id: sampleWallet.ownerId,
              status: 'verified',
              reason: null,
              kyc_status: 'verified',
              tier: 1,
              test_event: true,
            }
          : type.startsWith('aml.alert.')
            ? {
                alert_id: deps.newId('amlAlert'),
                status: type === 'aml.alert.resolved' ? 'resolved' : 'open',
                rule_id: deps.newId('amlRule'),
                rule_type: 'velocity',
                action: 'alert',
                transfer_id: sampleTransfer.id,
                conversion_quote_id: null,
                wallet_id: sampleTransfer.sourceWalletId,
                customer_id: sampleWallet.ownerId,
                disposition: type === 'aml.alert.resolved' ? 'false_positive' : null,
                test_event: true,
              }
            : type.startsWith('payment_batch.')
              ? {
                  payment_batch_id: deps.newId('paymentBatch'),
                  reference: 'payroll-sample',
                  status:
                    type === 'payment_batch.created' ? 'validating' : type.slice('payment_batch.'.length),
                  failure_code: null,
                  source: sampleTransfer.sourceWalletId,
                  currency: sampleTransfer.currency,
                  total: '1500.00',
                  items: 3,
                  succeeded: 0,
                  failed: 0,
                  canceled: 0,
                  approval: null,
                  test_event: true,
                }
              : type.startsWith('reconciliation.exception.')
                ? {
                    exception_id: deps.newId('reconciliationException'),
                    kind: 'amount_mismatch',
                    status: type.endsWith('resolved') ? 'resolved' : 'open',
                    transfer_id: sampleTransfer.id,
                    statement_id: deps.newId('statement'),
                    line: 1,
                    resolution: type.endsWith('resolved') ? 'write_off' : null,
                    test_event: true,
                  }
                : type === 'reconciliation.statement.imported'
                  ? {
                      statement_id: deps.newId('statement'),
                      rail: 'mobile_money',
                      from: now.toISOString().slice(0, 10),
                      to: now.toISOString().slice(0, 10),
                      lines: 3,
                      matched: 2,
                      exceptions: 1,
                      test_event: true,
                    }
                  : type.startsWith('export.')
                    ? {
                        export_id: deps.newId('export'),
                        type: 'transfers',
                        format: 'csv',
                        status: type === 'export.ready' ? 'ready' : 'failed',
                        rows: 3,
                        bytes: 512,
                        sha256: '0'.repeat(64),
                        expires_at: null,
                        test_event: true,
                      }
                    : type === 'ledger.matched'
                      ? {
                          transfer_id: sampleTransfer.id,
                          ledger_state: 'matched',
                          rail: 'mobile_money',
                          test_event: true,
                        }
                      : type === 'approval.updated'
                        ? {
                            ...approvalEventData(sampleApproval(deps, sampleTransfer.id, now)),
                            test_event: true,
                          }
                        : type === 'policy.updated'
                          ? {
                              version: 2,
                              rules: 1,
                              created_by: 'system',
                              approval_id: null,
                              test_event: true,
                            }
                          : type === 'fee_schedule.updated'
                            ? {
                                version: 2,
                                previous_version: 1,
                                rules: 1,
                                created_by: 'system',
                                test_event: true,
                              }
                            : type === 'launch_gate.updated'
                              ? {
                                  product: 'mobile_money',
                                  gate: 'contacts_named',
                                  state: 'passed',
                                  previous_state: 'open',
                                  evidence: {
                                    contacts: {
                                      technical: 'tech@example.com',
                                      compliance: 'compliance@example.com',
                                      finance: 'finance@example.com',
                                    },
                                  },
                                  evidence_record: deps.newId('evidence'),
                                  updated_at: now.toISOString(),
                                  test_event: true,
                                }
                              : type.startsWith('loan.')
                                ? {
                                    loan_id: deps.newId('loan'),
                                    status: LOAN_SAMPLE_STATUS[type] ?? 'active',
                                    status_reason: null,
                                    product: deps.newId('loanProduct'),
                                    customer: sampleWallet.ownerId,
                                    wallet: sampleWallet.id,
                                    principal: '12000.00',
                                    currency: 'KES',
                                    principal_outstanding: '12000.00',
                                    total_outstanding: '13520.00',
                                    days_past_due: type === 'loan.overdue' ? 1 : 0,
                                    arrears_bucket: type === 'loan.overdue' ? 'dpd_1_30' : 'current',
                                    test_event: true,
                                  }
                                : {
                                    subscription_id: deps.newId('webhookSubscription'),
                                    reason: 'failing_too_long',
                                    test_event: true,
                                  };
  const event: EventRecord = newEvent(
    deps,
    {
      organizationId,
      type,
      resourceId: null,
      data,
    },
    now,
  );
  await recordEvents(tx, deps, [event]);
  return event;
}

/** The status a sample loan event shows; the others show an active loan. */
const LOAN_SAMPLE_STATUS: Readonly<Record<string, string>> = {
  'loan.applied': 'approved',
  'loan.approved': 'approved',
  'loan.rejected': 'rejected',
  'loan.canceled': 'canceled',
  'loan.paid_off': 'paid_off',
  'loan.written_off': 'written_off',
};

/** An approved approval of a sample transfer, for `approval.updated` test events. */
function sampleApproval(deps: Deps, transferId: string, now: Date): Approval {
  return {
    id: deps.newId('approval'),
    organizationId: 'org_sample',
    resourceType: 'transfer',
    resourceId: transferId,
    status: 'approved',
    policyVersion: 2,
    rule: 'large_payouts',
    quorum: 1,
    roles: ['approver'],
    distinctRoles: false,
    initiatedBy: deps.newId('member'),
    expiresAt: new Date(now.getTime() + 24 * 3_600_000),
    createdAt: now,
    decidedAt: now,
    votes: [
      {
        memberId: deps.newId('member'),
        email: 'approver@example.com',
        role: 'approver',
        decision: 'approve',
        comment: null,
        apiKeyId: deps.newId('apiKey'),
        createdAt: now,
      },
    ],
  };
}

export function sealWebhookSecret(deps: Deps, subscriptionId: string, secret: string): SealedSecret {
  const sealed = seal(deps.keyring, secret, webhookSecretContext(subscriptionId), deps.randomBytes);
  return { keyId: sealedKeyId(sealed), sealed };
}
