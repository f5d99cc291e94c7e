/**
 * `mkoba subscriptions promote`: an operator copies an organization's reviewed sandbox webhook subscriptions
 * into pilot or production (docs/GOING-LIVE.md). The sandbox's database is read through the same link the
 * launch gates are (MKOBA_SANDBOX_DATABASE_URL); each subscription copied gets a new id and a new secret,
 * shown once; one evidence record names the operator, what was copied and what was not.
 */

import type { Deps } from '../../../app/deps.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { isLiveEnvironment } from '../../../domain/access.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import { isPayloadVersion, PAYLOAD_VERSIONS } from '../../../domain/payloadVersions.ts';
import { formatWebhookSecret, WEBHOOK_SECRET_RANDOM_BYTES } from '../../../domain/signing.ts';
import { PAYLOAD_FORMATS } from '../../../domain/webhooks.ts';
import {
  findOrganizationByName,
  lockOrganization,
  type OrganizationRow,
} from '../../../store/repositories/organizations.ts';
import type { Queryable } from '../../../store/store.ts';
import { checkOperatorName } from '../../apiKeys/index.ts';
import {
  insertPromotedSubscription,
  listPromotableSubscriptions,
  listSubscriptionUrls,
  type PromotableSubscription,
} from '../repository/promotion.ts';
import { checkSubscriptionUrl, unknownEventTypes } from './checks.ts';
import { sealWebhookSecret } from './subscriptions.ts';

export interface PromotionInput {
  organizationName: string;
  /** Who ran the command on the server (the CLI's OS user): the evidence records them. */
  operator: string;
  /** Only these sandbox subscriptions (whsub_…); every enabled one when absent. */
  subscriptionIds?: readonly string[] | undefined;
}

export interface PromotedSubscription {
  sandboxSubscription: string;
  subscription: string;
  url: string;
  events: string[];
  /** The new subscription's signing secret, in clear: shown once, never stored in clear. */
  secret: string;
}

export interface SkippedSubscription {
  sandboxSubscription: string;
  url: string;
  reason: string;
}

export interface PromotionResult {
  organizationId: string;
  sandboxOrganizationId: string;
  promoted: PromotedSubscription[];
  skipped: SkippedSubscription[];
  evidenceRecord: string | null;
}

/**
 * Why this deployment cannot take a sandbox subscription's choices as they are, if it cannot: the sandbox
 * may run a newer release, with a payload version, event types or a payload format this one does not know.
 * A subscription pinned to a version this deployment cannot render would silently receive another shape.
 */
function choiceUnknownHere(source: PromotableSubscription): string | undefined {
  const { api_version: version, events, payload_format: format } = source.values;
  if (typeof version !== 'string' || !isPayloadVersion(version)) {
    return `api_version ${String(version)} is not a payload version here (known: ${PAYLOAD_VERSIONS.join(', ')})`;
  }
  const unknown = unknownEventTypes(Array.isArray(events) ? events.map(String) : []);
  if (unknown.length > 0) return `event types not known here: ${unknown.join(', ')}`;
  if (!(PAYLOAD_FORMATS as readonly unknown[]).includes(format)) {
    return `payload_format ${String(format)} is not known here (known: ${PAYLOAD_FORMATS.join(', ')})`;
  }
  return undefined;
}

/**
 * Copies the sandbox organization's enabled subscriptions (or those named) to the organization of the same
 * name here. Each URL must pass this deployment's rules (public HTTPS, resolved before the transaction) and
 * each choice be known here (choiceUnknownHere); one that does not, or whose URL a subscription here
 * already has, is skipped with its reason. The copy
 * is one transaction with the organization locked, so two promotions do not copy a URL twice. The
 * organization's own switch (`mkoba orgs set-webhooks`) is left as it is.
 */
export async function promoteSandboxSubscriptions(
  deps: Deps,
  input: PromotionInput,
): Promise<PromotionResult> {
  const operator = checkOperatorName(input.operator);
  const { sandbox, organization, sandboxOrganization } = await findPromotionPair(deps, input);
  const sources = await chosenSources(sandbox, sandboxOrganization.id, input);
  // This deployment's URL rules, DNS included, with no transaction open.
  const { passed, skipped } = await checkSources(deps, sources);
  return deps.store.transaction(async (tx) => {
    await lockOrganization(tx, organization.id);
    const promoted = await copySubscriptions(tx, deps, organization.id, passed, skipped);
    const result = {
      organizationId: organization.id,
      sandboxOrganizationId: sandboxOrganization.id,
      promoted,
      skipped,
    };
    if (promoted.length === 0) return { ...result, evidenceRecord: null };
    const [record] = await appendEvidence(tx, deps, [
      {
        organizationId: organization.id,
        kind: 'webhook_subscription.promote',
        actor: SYSTEM_ACTOR,
        data: {
          decided_by: 'operator',
          operator,
          environment: deps.environment,
          sandbox_organization: sandboxOrganization.id,
          promoted: promoted.map((p) => ({
            sandbox_subscription: p.sandboxSubscription,
            subscription: p.subscription,
            url: p.url,
            events: p.events,
          })),
          skipped: skipped.map((s) => ({ sandbox_subscription: s.sandboxSubscription, reason: s.reason })),
        },
      },
    ]);
    return { ...result, evidenceRecord: record?.id ?? null };
  });
}

/**
 * Where a promotion copies from and to: this deployment must be live and linked to the sandbox's database,
 * and the organization named must exist in both.
 */
async function findPromotionPair(
  deps: Deps,
  input: PromotionInput,
): Promise<{ sandbox: Queryable; organization: OrganizationRow; sandboxOrganization: OrganizationRow }> {
  if (!isLiveEnvironment(deps.environment)) {
    throw validationError(
      'environment',
      'subscriptions are promoted from the sandbox into pilot or production: run this there',
      'not_live',
    );
  }
  const sandbox = deps.launchGateSource;
  if (!sandbox) {
    throw validationError(
      'environment',
      "the sandbox's database is not linked: set MKOBA_SANDBOX_DATABASE_URL (as for the launch gates)",
      'sandbox_not_linked',
    );
  }
  const organization = await findOrganizationByName(deps.store, input.organizationName);
  if (!organization) {
    throw validationError(
      'organization',
      `no organization named '${input.organizationName}' here: issue its first key with mkoba keys create`,
      'not_found',
    );
  }
  const sandboxOrganization = await findOrganizationByName(sandbox, input.organizationName);
  if (!sandboxOrganization) {
    throw validationError(
      'organization',
      `the sandbox has no organization named '${input.organizationName}'`,
      'no_sandbox_organization',
    );
  }
  return { sandbox, organization, sandboxOrganization };
}

/** The sandbox subscriptions to copy: the ones named, each of which must be enabled there, or every enabled one. */
async function chosenSources(
  sandbox: Queryable,
  sandboxOrganizationId: string,
  input: PromotionInput,
): Promise<PromotableSubscription[]> {
  const sources = await listPromotableSubscriptions(sandbox, sandboxOrganizationId);
  if (input.subscriptionIds === undefined) return sources;
  const named = new Set(input.subscriptionIds);
  const unknown = [...named].filter((id) => !sources.some((s) => s.id === id));
  if (unknown.length > 0) {
    throw validationError(
      'subscription',
      `not an enabled sandbox subscription of '${input.organizationName}': ${unknown.join(', ')}`,
      'not_found',
    );
  }
  return sources.filter((s) => named.has(s.id));
}

/** A sandbox subscription whose choices and URL this deployment takes, with its URL as checked. */
interface PassedSubscription {
  source: PromotableSubscription;
  url: string;
}

/** Sorts the sources into those this deployment takes and those it skips, with why. */
async function checkSources(
  deps: Deps,
  sources: readonly PromotableSubscription[],
): Promise<{ passed: PassedSubscription[]; skipped: SkippedSubscription[] }> {
  const skipped: SkippedSubscription[] = [];
  const passed: PassedSubscription[] = [];
  for (const source of sources) {
    const url = String(source.values.url);
    const unknownChoice = choiceUnknownHere(source);
    if (unknownChoice !== undefined) {
      skipped.push({ sandboxSubscription: source.id, url, reason: unknownChoice });
      continue;
    }
    try {
      passed.push({ source, url: await checkSubscriptionUrl(deps, url) });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      skipped.push({ sandboxSubscription: source.id, url, reason: error.detail });
    }
  }
  return { passed, skipped };
}

/**
 * Inserts each passed subscription with a new id and secret, in the organization's locked transaction; one
 * whose URL a subscription here already has (or one copied before it) is added to `skipped` instead.
 */
async function copySubscriptions(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  passed: readonly PassedSubscription[],
  skipped: SkippedSubscription[],
): Promise<PromotedSubscription[]> {
  const existing = await listSubscriptionUrls(tx, organizationId);
  const promoted: PromotedSubscription[] = [];
  const now = deps.now();
  for (const { source, url } of passed) {
    if (existing.has(url)) {
      skipped.push({
        sandboxSubscription: source.id,
        url,
        reason: 'a subscription here already has this URL',
      });
      continue;
    }
    const id = deps.newId('webhookSubscription');
    const secret = formatWebhookSecret(deps.randomBytes(WEBHOOK_SECRET_RANDOM_BYTES));
    await insertPromotedSubscription(
      tx,
      { id, organizationId, now },
      source,
      sealWebhookSecret(deps, id, secret),
    );
    existing.add(url);
    promoted.push({
      sandboxSubscription: source.id,
      subscription: id,
      url,
      events: source.values.events as string[],
      secret,
    });
  }
  return promoted;
}
