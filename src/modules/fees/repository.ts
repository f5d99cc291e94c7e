/**
 * The fee schedule's versions: written one number at a time under the writers' lock, read by number or
 * newest first.
 */
import { rowTable } from '../../store/repositories/records.ts';
import { toDate, toJsonObject } from '../../store/repositories/rows.ts';
import { versionedRecords } from '../../store/repositories/versions.ts';
import type { Queryable } from '../../store/store.ts';
import { type FeeSchedule, feeRuleJson, feeRulesFromStored } from './domain.ts';

const SCHEDULES = rowTable<FeeSchedule>('fee_schedule_versions', {
  organizationId: String,
  version: Number,
  rules: (value) => feeRulesFromStored(toJsonObject(value)),
  createdBy: String,
  createdAt: toDate,
});

const FEE_SCHEDULE_VERSIONS = versionedRecords({ ...SCHEDULES, lockName: 'mkoba.fee_schedule' });

/** The organization's newest fee schedule version, if one is stored. */
export const findCurrentFeeSchedule = FEE_SCHEDULE_VERSIONS.findCurrent;
export const findFeeScheduleVersion = FEE_SCHEDULE_VERSIONS.findVersion;
/** Newest first, served by the primary key. */
export const listFeeScheduleVersions = FEE_SCHEDULE_VERSIONS.listVersions;

/** Writes a version. The primary key refuses a second writer of the same number, so versions never fork. */
export async function insertFeeScheduleVersion(db: Queryable, schedule: FeeSchedule): Promise<void> {
  await db.query(
    `INSERT INTO fee_schedule_versions (${SCHEDULES.columns}) VALUES ($1, $2, $3::jsonb, $4, $5)`,
    [
      schedule.organizationId,
      schedule.version,
      JSON.stringify(schedule.rules.map(feeRuleJson)),
      schedule.createdBy,
      schedule.createdAt,
    ],
  );
}

/** Serialises fee schedule writers of one organization for the rest of the transaction. */
export const lockFeeScheduleWrites = FEE_SCHEDULE_VERSIONS.lockWrites;
