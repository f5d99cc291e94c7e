/**
 * What a subscription's choices must pass before they are stored: its URL (its form, and in production
 * where its host resolves, looked up with no transaction open), its event types and its payload version,
 * and the operator's switch for the organization.
 */
import type { Deps } from '../../../app/deps.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import { EVENT_TYPES } from '../../../domain/events.ts';
import {
  isBefore,
  isPayloadVersion,
  PAYLOAD_VERSIONS,
  type PayloadVersion,
} from '../../../domain/payloadVersions.ts';
import {
  checkResolvedAddresses,
  checkWebhookUrl,
  isIpAddress,
  urlHost,
  type WebhookAddressPolicy,
} from '../../../domain/webhooks.ts';
import { resolveWithin as resolveHostWithin } from '../../../outbound/guard.ts';
import { findOrganization } from '../../../store/repositories/organizations.ts';

/**
 * A webhook URL that passed the address rules, DNS included. It is checked before the write's transaction
 * opens (see sendWrite's prepare step), so a slow or failing look-up neither holds a transaction nor is
 * recorded as the outcome of an Idempotency-Key.
 */
export type CheckedWebhookUrl = string & { readonly checkedWebhookUrl: unique symbol };

/** A known payload version, or a 400 `unknown_api_version` naming the known ones. */
export function checkApiVersion(text: string): PayloadVersion {
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
export function movedForward(current: PayloadVersion, text: string): PayloadVersion {
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

export function checkEvents(events: readonly string[]): string[] {
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
