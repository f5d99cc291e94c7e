/**
 * AML alerts: opened by the ledger writer when a rule with the `alert` or `review` action fires (at most one
 * open per wallet and rule), resolved by an operator with a disposition. Each opening and resolution is an
 * event; each resolution is evidence.
 */

import type { Deps } from '../../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../../app/events.ts';
import { appendEvidence } from '../../../../app/evidence.ts';
import { getById, listPage, lockById } from '../../../../app/reads.ts';
import type { AmlAlert, AmlDisposition } from '../../../../domain/amlAlerts.ts';
import type { AmlHit } from '../../../../domain/decisions/aml.ts';
import { invalidStateTransition } from '../../../../domain/errors.ts';
import type { EventRecord } from '../../../../domain/events.ts';
import { actorName, type EvidenceActor, requireMemberActor } from '../../../../domain/evidence.ts';
import type { Queryable } from '../../../../store/store.ts';
import {
  type AmlAlertFilter,
  findAmlAlert,
  insertAmlAlerts,
  listAmlAlerts,
  saveAmlAlertResolution,
} from '../../repository/aml.ts';

/** The aml alert with this id, its row locked for the transaction; 404 when there is none. */
const lockAmlAlert = lockById(findAmlAlert, 'aml_alert');

/** The operator's note on a resolution. */
export const AML_ALERT_NOTE_LENGTH_MAX = 1_000;

export interface AmlAlertDraft {
  organizationId: string;
  /** What fired it: a transfer, or a conversion's quote. */
  transferId?: string | undefined;
  conversionQuoteId?: string | undefined;
  walletId: string;
  customerId: string;
  hit: AmlHit;
}

/** The `data` of `aml.alert.*` events: the alert without the operator's note. */
export function amlAlertEventData(alert: AmlAlert): Record<string, unknown> {
  return {
    alert_id: alert.id,
    status: alert.status,
    rule_id: alert.ruleId,
    rule_type: alert.ruleType,
    action: alert.action,
    transfer_id: alert.transferId,
    conversion_quote_id: alert.conversionQuoteId,
    wallet_id: alert.walletId,
    customer_id: alert.customerId,
    disposition: alert.disposition,
  };
}

function alertEvent(
  deps: Deps,
  type: 'aml.alert.opened' | 'aml.alert.resolved',
  alert: AmlAlert,
  now: Date,
): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: alert.organizationId,
      type,
      resourceId: alert.id,
      data: amlAlertEventData(alert),
    },
    now,
  );
}

/**
 * Opens the drafts' alerts in the caller's transaction (after their transfers are written), with one
 * insert and one events write; a wallet and rule that already has an open alert gets none. Returns those
 * opened.
 */
export async function openAmlAlerts(
  tx: Queryable,
  deps: Deps,
  drafts: readonly AmlAlertDraft[],
  now: Date,
): Promise<AmlAlert[]> {
  const candidates: AmlAlert[] = drafts.flatMap((d) =>
    d.hit.action === 'block'
      ? []
      : [
          {
            id: deps.newId('amlAlert'),
            organizationId: d.organizationId,
            ruleId: d.hit.ruleId,
            ruleType: d.hit.ruleType,
            ruleVersion: d.hit.ruleVersion,
            action: d.hit.action,
            transferId: d.transferId ?? null,
            conversionQuoteId: d.conversionQuoteId ?? null,
            walletId: d.walletId,
            customerId: d.customerId,
            status: 'open',
            reason: d.hit.reason,
            observed: d.hit.observed,
            disposition: null,
            note: null,
            resolvedBy: null,
            createdAt: now,
            resolvedAt: null,
          },
        ],
  );
  // The same wallet tripping the same rule twice in one batch: one alert.
  const seen = new Set<string>();
  const unique = candidates.filter((a) => {
    const key = `${a.walletId}\u0000${a.ruleId}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const opened = await insertAmlAlerts(tx, unique);
  await recordEvents(
    tx,
    deps,
    opened.map((a) => alertEvent(deps, 'aml.alert.opened', a, now)),
  );
  return opened;
}

export const getAmlAlert = getById<AmlAlert>(findAmlAlert, 'aml_alert');

export const listAlerts = listPage<AmlAlertFilter, AmlAlert>(listAmlAlerts);

/** Resolves an open alert once: its row is locked, so two resolutions racing end with one. */
export async function resolveAmlAlert(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  input: { disposition: AmlDisposition; note?: string | undefined },
  actor: EvidenceActor,
): Promise<AmlAlert> {
  const alert = await lockAmlAlert(tx, organizationId, id);
  // Resolving (a false positive clears it) is a person's decision: never a server key's.
  requireMemberActor(actor, 'resolve an AML alert');
  if (alert.status !== 'open') {
    throw invalidStateTransition(
      'Invalid state transition',
      `Alert ${alert.id} was already resolved as ${alert.disposition}.`,
    );
  }
  const now = deps.now();
  const resolved: AmlAlert = {
    ...alert,
    status: 'resolved',
    disposition: input.disposition,
    note: input.note ?? null,
    resolvedBy: actorName(actor),
    resolvedAt: now,
  };
  await saveAmlAlertResolution(tx, resolved);
  await recordEvents(tx, deps, [alertEvent(deps, 'aml.alert.resolved', resolved, now)]);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'alert.disposition',
      actor,
      transferId: alert.transferId ?? undefined,
      walletId: alert.walletId,
      customerId: alert.customerId,
      data: {
        alert_id: alert.id,
        ...(alert.conversionQuoteId === null ? {} : { conversion_quote_id: alert.conversionQuoteId }),
        rule_id: alert.ruleId,
        rule_type: alert.ruleType,
        rule_version: alert.ruleVersion,
        disposition: input.disposition,
        note: input.note ?? null,
      },
    },
  ]);
  return resolved;
}
