import { organizationRecordFinder } from '../../store/repositories/records.ts';
import { computed, rowMapper } from '../../store/repositories/rowMappers.ts';
import { toDate, toJsonObject } from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';
import { type FeeSchedule, feeRuleJson, feeRulesFromStored } from './domain.ts';

const COLUMNS = 'organization_id, version, rules, created_by, created_at';

const fromRow = rowMapper<FeeSchedule>({
  organizationId: String,
  version: Number,
  rules: computed((row) => feeRulesFromStored(toJsonObject(row.rules))),
  createdBy: String,
  createdAt: toDate,
});

/** The organization's newest fee schedule version, if one is stored. */
export async function findCurrentFeeSchedule(
  db: Queryable,
  organizationId: string,
): Promise<FeeSchedule | undefined> {
  const [row] = await db.query(
    `SELECT ${COLUMNS} FROM fee_schedule_versions WHERE organization_id = $1 ORDER BY version DESC LIMIT 1`,
    [organizationId],
  );
  return row && fromRow(row);
}

/** The fee schedule versions as their finder reads them. */
const VERSIONS = { name: 'fee_schedule_versions', columns: COLUMNS, fromRow };

export const findFeeScheduleVersion = organizationRecordFinder<FeeSchedule, number>(VERSIONS, 'version');

/** Newest first, served by the primary key. */
export async function listFeeScheduleVersions(
  db: Queryable,
  organizationId: string,
  beforeVersion: number | undefined,
  rowsMax: number,
): Promise<FeeSchedule[]> {
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM fee_schedule_versions
      WHERE organization_id = $1 AND ($2::int IS NULL OR version < $2)
      ORDER BY version DESC LIMIT $3`,
    [organizationId, beforeVersion ?? null, rowsMax],
  );
  return rows.map(fromRow);
}

/** Writes a version. The primary key refuses a second writer of the same number, so versions never fork. */
export async function insertFeeScheduleVersion(db: Queryable, schedule: FeeSchedule): Promise<void> {
  await db.query(`INSERT INTO fee_schedule_versions (${COLUMNS}) VALUES ($1, $2, $3::jsonb, $4, $5)`, [
    schedule.organizationId,
    schedule.version,
    JSON.stringify(schedule.rules.map(feeRuleJson)),
    schedule.createdBy,
    schedule.createdAt,
  ]);
}

/** Serialises fee schedule writers of one organization for the rest of the transaction. */
export async function lockFeeScheduleWrites(db: Queryable, organizationId: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('mkoba.fee_schedule'), hashtext($1))", [
    organizationId,
  ]);
}
