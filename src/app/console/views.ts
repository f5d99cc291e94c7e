/**
 * What the console reads beyond the API's own use cases: the home page's figures, transfer search, a
 * subscription's delivery log, the names beside customer and wallet ids, and the organization's API keys (an
 * admin creates their own, and revokes any).
 */
import { normaliseEmail } from '../../domain/contactDetails.ts';
import { type Page, toPage } from '../../domain/pagination.ts';
import type { Transfer } from '../../domain/transferRecord.ts';
import {
  createOwnApiKeyGoverned,
  listApiKeys,
  type OwnKeyOutcome,
  revokeOrganizationKeyIn,
} from '../../modules/apiKeys/index.ts';
import type { DeliveryView } from '../../modules/webhooks/index.ts';
import { getSubscription } from '../../modules/webhooks/index.ts';
import type { ApiKeyRow } from '../../store/repositories/apiKeys.ts';
import {
  type BucketCount,
  findPartyNames,
  listSubscriptionDeliveries,
  openQueueCounts,
  type RailOutcomeRow,
  railOutcomes,
  searchTransfers as searchTransferRows,
  settledVolume,
  type TransferSearch,
  transfersPerHour,
  type VolumeRow,
} from '../../store/repositories/console.ts';
import type { Deps } from '../deps.ts';
import { type ConsoleIdentity, consoleActor } from './session.ts';

/** The home page's chart spans this many hours back from now. */
export const CONSOLE_CHART_HOURS = 24;
/** Deliveries a subscription's log shows. */
export const CONSOLE_DELIVERY_LOG_ROWS = 50;

export interface Overview {
  dayStart: Date;
  now: Date;
  volume: VolumeRow[];
  rails: (RailOutcomeRow & { successRate: number | null })[];
  hourly: BucketCount[];
  queues: { approvals: number; reviews: number; alerts: number; exceptions: number };
}

/** Today (UTC) so far: settled volume, each rail's outcomes, and transfers per hour over the last day. */
export async function consoleOverview(deps: Deps, organizationId: string): Promise<Overview> {
  const now = deps.now();
  const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const chartStart = new Date(
    Math.floor(now.getTime() / 3_600_000) * 3_600_000 - (CONSOLE_CHART_HOURS - 1) * 3_600_000,
  );
  const until = new Date(now.getTime() + 1);
  const [volume, rails, hourly, queues] = await Promise.all([
    settledVolume(deps.store, organizationId, dayStart, until),
    railOutcomes(deps.store, organizationId, dayStart, until),
    transfersPerHour(deps.store, organizationId, chartStart, until),
    openQueueCounts(deps.store, organizationId),
  ]);
  // Every hour of the chart, the empty ones too, so the line does not skip them.
  const byHour = new Map(hourly.map((b) => [b.bucketStart.getTime(), b]));
  const filled: BucketCount[] = [];
  for (let i = 0; i < CONSOLE_CHART_HOURS; i++) {
    const start = chartStart.getTime() + i * 3_600_000;
    filled.push(byHour.get(start) ?? { bucketStart: new Date(start), created: 0, settled: 0, failed: 0 });
  }
  return {
    dayStart,
    now,
    volume,
    // The success rate counts finished transfers only: settled out of settled and failed.
    rails: rails.map((r) => ({
      ...r,
      successRate: r.settled + r.failed === 0 ? null : r.settled / (r.settled + r.failed),
    })),
    hourly: filled,
    queues,
  };
}

export async function searchTransfers(
  deps: Deps,
  organizationId: string,
  search: TransferSearch & { limit: number },
): Promise<Page<Transfer>> {
  return toPage(await searchTransferRows(deps.store, organizationId, search, search.limit + 1), search.limit);
}

export interface Party {
  id: string;
  name: string;
}

/** The names a page shows beside the customer and wallet ids it lists. */
export interface PartyNames {
  /** The customer, by id; undefined for no id, or one that is not the organization's. */
  customer(id: string | null | undefined): Party | undefined;
  /** The wallet's owner, by the wallet's id (or a ledger account's: a wallet's is the wallet's id). */
  walletOwner(id: string | null | undefined): Party | undefined;
}

/** Reads, in one query, the names of the customers and of the wallets' owners a page lists. */
export async function partyNames(
  deps: Deps,
  organizationId: string,
  ids: { customers?: (string | null)[]; wallets?: (string | null)[] },
): Promise<PartyNames> {
  const present = (list: (string | null)[] = []) => list.filter((id): id is string => id !== null);
  const customerIds = present(ids.customers);
  const walletIds = present(ids.wallets);
  const { customerNames, walletOwners } =
    customerIds.length === 0 && walletIds.length === 0
      ? { customerNames: new Map<string, string>(), walletOwners: new Map<string, string>() }
      : await findPartyNames(deps.store, organizationId, customerIds, walletIds);
  const customer = (id: string | null | undefined): Party | undefined => {
    const name = id ? customerNames.get(id) : undefined;
    return id && name !== undefined ? { id, name } : undefined;
  };
  return { customer, walletOwner: (id) => customer(id ? walletOwners.get(id) : undefined) };
}

export async function subscriptionDeliveryLog(
  deps: Deps,
  organizationId: string,
  subscriptionId: string,
): Promise<DeliveryView[]> {
  await getSubscription(deps.store, organizationId, subscriptionId); // 404 unless it is the organization's
  return listSubscriptionDeliveries(deps.store, organizationId, subscriptionId, CONSOLE_DELIVERY_LOG_ROWS);
}

export function organizationKeys(deps: Deps, organizationId: string): Promise<ApiKeyRow[]> {
  return listApiKeys(deps.store, organizationId);
}

/**
 * The signed-in member's new key, for themself only: its scopes are at most what their roles grant now
 * (planOwnApiKey). A form naming another member is refused, never quietly redirected. A key beyond
 * `read`/`write` waits for approval where the organization's policy asks (createOwnApiKeyGoverned).
 */
export function createOrganizationKey(
  deps: Deps,
  identity: ConsoleIdentity,
  input: { scopes: string[]; memberEmail?: string | undefined; description?: string | undefined },
): Promise<OwnKeyOutcome> {
  const memberEmail = input.memberEmail?.trim() ? normaliseEmail(input.memberEmail, 'member') : undefined;
  return deps.store.transaction((tx) =>
    createOwnApiKeyGoverned(
      tx,
      deps,
      {
        organizationId: identity.organizationId,
        memberId: identity.member.id,
        scopes: identity.scopes,
        actor: consoleActor(identity),
      },
      {
        scopes: input.scopes,
        description: input.description,
        memberEmail,
      },
    ),
  );
}

/** Revokes one of the organization's keys; another organization's key is a 404, as if it did not exist. */
export function revokeOrganizationKey(
  deps: Deps,
  identity: ConsoleIdentity,
  keyId: string,
): Promise<ApiKeyRow> {
  return deps.store.transaction((tx) =>
    revokeOrganizationKeyIn(tx, deps, identity.organizationId, keyId, consoleActor(identity)),
  );
}
