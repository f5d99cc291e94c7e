/**
 * The Travel Rule on new transfers, and its settings as data per organization. A transfer to a crypto
 * address is checked before the ledger writer (none of it needs a lock): its route must be approved, and
 * when its amount in USD reaches its jurisdiction's threshold it must carry complete originator and
 * beneficiary data. The data is kept only as an evidence record, written with the transfer; the transfer
 * names the record.
 */

import type { Deps } from '../../../app/deps.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import {
  checkTravelRuleData,
  decideTravelRule,
  defaultTravelRuleSettings,
  parseTravelRuleSettings,
  presentTravelRuleSettings,
  type TravelRuleDecision,
  type TravelRuleInput,
  type TravelRuleSettings,
  travelRuleDataInvalid,
  travelRuleRequired,
} from '../../../domain/decisions/travelRule.ts';
import { type CryptoAddressDestination, DIGITAL_ASSETS } from '../../../domain/digitalAssets.ts';
import { AppError, type FieldError, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor, EvidenceDraft, EvidenceRecord } from '../../../domain/evidence.ts';
import type { Transfer, TravelRuleLink } from '../../../domain/transferRecord.ts';
import { findEvidenceRecord } from '../../../store/repositories/evidence.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  findTravelRuleSettings,
  insertTravelRuleSettingsIfAbsent,
  type StoredTravelRuleSettings,
  saveTravelRuleSettings,
} from '../repository/travelRule.ts';
import { findVerifiedCountry } from '../repository/verifications.ts';
import { requireApprovedRoute, routeLimitRefusal } from './digitalAssetRoutes.ts';

export interface TravelRuleSettingsView {
  settings: TravelRuleSettings;
  updatedAt: Date;
}

function parseStored(stored: StoredTravelRuleSettings): TravelRuleSettingsView {
  return { settings: parseTravelRuleSettings(stored, DIGITAL_ASSETS), updatedAt: stored.updatedAt };
}

/** Writes the defaults in the caller's transaction if the organization has no settings yet. */
async function ensureDefaultSettings(tx: Queryable, deps: Deps, organizationId: string): Promise<void> {
  if (await findTravelRuleSettings(tx, organizationId)) return;
  const presented = presentTravelRuleSettings(defaultTravelRuleSettings());
  const written = await insertTravelRuleSettingsIfAbsent(tx, {
    organizationId,
    ...presented,
    updatedAt: deps.now(),
  });
  if (!written) return;
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'travel_rule.settings.update',
      actor: SYSTEM_ACTOR,
      data: { change: 'defaults', after: presented },
    },
  ]);
}

/** The organization's settings, the defaults written first if need be. */
export async function getTravelRuleSettings(
  deps: Deps,
  organizationId: string,
): Promise<TravelRuleSettingsView> {
  return readSettingsWithDefaults(deps.store, organizationId, () =>
    deps.store.transaction((tx) => ensureDefaultSettings(tx, deps, organizationId)),
  );
}

/** The organization's settings read inside a transaction `tx` (a callback's), the defaults written first if need be. */
export async function travelRuleSettingsIn(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
): Promise<TravelRuleSettingsView> {
  return readSettingsWithDefaults(tx, organizationId, () => ensureDefaultSettings(tx, deps, organizationId));
}

/**
 * The settings read through `db`; where there are none yet, `writeDefaults` writes them (in its own
 * transaction or the caller's) and they are read again.
 */
async function readSettingsWithDefaults(
  db: Queryable,
  organizationId: string,
  writeDefaults: () => Promise<void>,
): Promise<TravelRuleSettingsView> {
  let stored = await findTravelRuleSettings(db, organizationId);
  if (!stored) {
    await writeDefaults();
    stored = await findTravelRuleSettings(db, organizationId);
  }
  if (!stored) throw new Error(`travel rule settings of ${organizationId} were not written`);
  return parseStored(stored);
}

/** Replaces the settings whole; a 400 names the first entry at fault. Recorded as evidence. */
export async function putTravelRuleSettings(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: { thresholds: Record<string, string>; rates: Record<string, string> },
  actor: EvidenceActor,
): Promise<TravelRuleSettingsView> {
  const settings = parseTravelRuleSettings(input, DIGITAL_ASSETS);
  await ensureDefaultSettings(tx, deps, organizationId);
  const before = await findTravelRuleSettings(tx, organizationId, { forUpdate: true });
  const presented = presentTravelRuleSettings(settings);
  const updatedAt = deps.now();
  await saveTravelRuleSettings(tx, { organizationId, ...presented, updatedAt });
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'travel_rule.settings.update',
      actor,
      data: {
        change: 'replace',
        before: before ? presentTravelRuleSettings(parseStored(before).settings) : null,
        after: presented,
      },
    },
  ]);
  return { settings, updatedAt };
}

/** What a new transfer carries into the writer: its link for the wire, and the evidence to append. */
export interface PreparedTravelRule {
  link: TravelRuleLink;
  evidence: EvidenceDraft;
}

/**
 * The Travel Rule step of a new transfer, given the validated transfer. Refuses `travel_rule` on other
 * destinations (400), a crypto destination whose asset is not the transfer's currency (400), a route that is
 * not enabled (422 `route_not_approved`), and missing or malformed data when the amount requires it (422
 * `travel_rule_required`, every field named) or when it was given anyway (400). Returns the evidence to
 * write when data was given; undefined when there is none to keep.
 */
export async function prepareTravelRule(
  deps: Deps,
  transfer: Transfer,
  customerId: string,
  input: TravelRuleInput | undefined,
): Promise<PreparedTravelRule | undefined> {
  const destination = cryptoDestinationOf(transfer, input);
  if (!destination) return undefined;
  const route = await requireApprovedRoute(
    deps,
    transfer.organizationId,
    destination.asset,
    destination.network,
  );
  // The route's single limit needs no lock; its daily limit is decided in the ledger writer's batch.
  const overLimit = routeLimitRefusal(route, transfer.amountMinor);
  if (overLimit) throw overLimit;
  const { settings } = await getTravelRuleSettings(deps, transfer.organizationId);
  const country = await findVerifiedCountry(deps.store, transfer.organizationId, customerId);
  const decision = decideTravelRule(
    { amountMinor: transfer.amountMinor, currency: transfer.currency, country },
    settings,
  );
  if (input === undefined && !decision.required) return undefined;
  const checked = checkTravelRuleData(input, {
    destinationAddress: destination.address,
    today: deps.now(),
  });
  if (!checked.data) throw travelRuleDataRefused(checked.errors, decision);
  const evidenceId = deps.newId('evidence');
  return {
    link: { evidenceId, required: decision.required },
    evidence: {
      id: evidenceId,
      organizationId: transfer.organizationId,
      kind: 'transfer.travel_rule',
      actor: SYSTEM_ACTOR,
      transferId: transfer.id,
      walletId: transfer.sourceWalletId ?? undefined,
      customerId,
      data: {
        required: decision.required,
        jurisdiction: decision.jurisdiction,
        threshold: decision.threshold,
        amount_usd: decision.amountUsd,
        rate: decision.rate,
        asset: destination.asset,
        network: destination.network,
        address: destination.address,
        originator: checked.data.originator,
        beneficiary: checked.data.beneficiary,
      },
    },
  };
}

/**
 * The transfer's crypto address, in the transfer's currency; undefined for another destination when no
 * `travel_rule` was given (one given there is refused).
 */
function cryptoDestinationOf(
  transfer: Transfer,
  input: TravelRuleInput | undefined,
): CryptoAddressDestination | undefined {
  const destination = transfer.destination;
  if (destination.type !== 'crypto_address') {
    if (input === undefined) return undefined;
    throw validationError(
      'travel_rule',
      'travel_rule is taken only with a crypto_address destination',
      'not_applicable',
    );
  }
  if (destination.asset !== transfer.currency) {
    throw validationError(
      'destination.asset',
      `destination.asset must be ${transfer.currency}, the currency of the transfer`,
      'currency_mismatch',
    );
  }
  return destination;
}

/** Data at fault: a 422 naming every field when the amount requires it, else a 400 (given, but not usable). */
function travelRuleDataRefused(errors: FieldError[], decision: TravelRuleDecision): AppError {
  if (decision.required) return travelRuleRequired(errors, decision);
  return travelRuleDataInvalid(errors);
}

/** A transfer's Travel Rule data for an operator: the evidence record the transfer names; 404 when none. */
export async function travelRuleRecordOf(
  deps: Deps,
  organizationId: string,
  transfer: Transfer,
): Promise<EvidenceRecord> {
  const record =
    transfer.travelRule &&
    (await findEvidenceRecord(deps.store, organizationId, transfer.travelRule.evidenceId));
  if (!record) {
    throw new AppError({
      status: 404,
      code: 'resource_missing',
      title: 'Resource not found',
      detail: `Transfer '${transfer.id}' carries no Travel Rule data.`,
    });
  }
  return record;
}
