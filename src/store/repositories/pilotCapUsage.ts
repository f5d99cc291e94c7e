/**
 * What each organization created per currency and UTC day in a pilot: the running count and sum its volume
 * caps are decided on. The ledger writer locks a batch's rows with one statement and writes them back with
 * one, as it does the tier limits' sums (limitUsage.ts).
 */
import type { Queryable } from '../store.ts';
import { type CounterRows, lockCounterRows } from './counterRows.ts';
import { rowMapper } from './rowMappers.ts';
import { fieldArrays, int8AsNumber, toBigInt, toDay } from './rows.ts';

export interface PilotUsageKey {
  organizationId: string;
  currency: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
}

export interface LockedPilotUsage extends PilotUsageKey {
  transferCount: number;
  sentMinor: bigint;
}

const pilotUsageFromRow = rowMapper<LockedPilotUsage>({
  organizationId: String,
  currency: String,
  day: toDay,
  transferCount: int8AsNumber,
  sentMinor: toBigInt,
});

export function pilotUsageKeyOf(k: PilotUsageKey): string {
  return `${k.organizationId}\u0000${k.currency}\u0000${k.day}`;
}

const PILOT_USAGE_KEYS =
  'unnest($1::text[], $2::text[], $3::date[]) WITH ORDINALITY AS k(organization_id, currency, day, i)';

const PILOT_USAGE: CounterRows<PilotUsageKey, LockedPilotUsage> = {
  lockStatement: `INSERT INTO pilot_cap_usage (organization_id, currency, day, transfer_count, sent_minor)
     SELECT k.organization_id, k.currency, k.day, 0, 0 FROM ${PILOT_USAGE_KEYS} ORDER BY k.i
     ON CONFLICT (organization_id, currency, day) DO UPDATE SET transfer_count = pilot_cap_usage.transfer_count
       WHERE false`,
  readStatement: `SELECT u.organization_id, u.currency, u.day::text AS day, u.transfer_count, u.sent_minor
     FROM ${PILOT_USAGE_KEYS}
     JOIN pilot_cap_usage u ON u.organization_id = k.organization_id AND u.currency = k.currency AND u.day = k.day`,
  keyFields: ['organizationId', 'currency', 'day'],
  keyOf: pilotUsageKeyOf,
  fromRow: pilotUsageFromRow,
};

/** Creates the rows that do not exist yet and locks them all, in key order (so batches never deadlock). */
export function lockPilotUsage(
  db: Queryable,
  keys: readonly PilotUsageKey[],
): Promise<Map<string, LockedPilotUsage>> {
  return lockCounterRows(db, PILOT_USAGE, keys);
}

/** Writes a batch's new counts and sums (rows locked by lockPilotUsage). */
export async function savePilotUsage(db: Queryable, usage: readonly LockedPilotUsage[]): Promise<void> {
  if (usage.length === 0) return;
  await db.query(
    `UPDATE pilot_cap_usage u SET transfer_count = v.transfer_count, sent_minor = v.sent_minor
       FROM unnest($1::text[], $2::text[], $3::date[], $4::bigint[], $5::bigint[])
         AS v(organization_id, currency, day, transfer_count, sent_minor)
      WHERE u.organization_id = v.organization_id AND u.currency = v.currency AND u.day = v.day`,
    [
      ...fieldArrays(usage, 'organizationId', 'currency', 'day'),
      usage.map((u) => String(u.transferCount)),
      usage.map((u) => u.sentMinor.toString()),
    ],
  );
}

/** Gives a transfer that moved no money back to its organization's day. */
export async function releasePilotUsage(
  db: Queryable,
  key: PilotUsageKey,
  amountMinor: bigint,
): Promise<void> {
  await db.query(
    `UPDATE pilot_cap_usage SET transfer_count = GREATEST(transfer_count - 1, 0),
            sent_minor = GREATEST(sent_minor - $4::bigint, 0)
      WHERE organization_id = $1 AND currency = $2 AND day = $3::date`,
    [key.organizationId, key.currency, key.day, amountMinor.toString()],
  );
}
