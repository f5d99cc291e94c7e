/**
 * Test clocks' rows: an organization's clock found or locked, saved as it advances, and the offsets of the
 * organizations whose clocks were advanced.
 */
import { recordFinderBy, rowTable } from '../../store/repositories/records.ts';
import { toDate } from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';
import type { TestClock } from './domain.ts';

const findClockRow = recordFinderBy(
  rowTable<TestClock>('test_clocks', {
    organizationId: String,
    offsetMs: Number,
    advances: Number,
    advancedAt: toDate,
  }),
  'organization_id',
);

function unadvanced(organizationId: string): TestClock {
  return { organizationId, offsetMs: 0, advances: 0, advancedAt: null };
}

/** The organization's clock; one never advanced runs with the real clock (offset 0). */
export async function findTestClock(db: Queryable, organizationId: string): Promise<TestClock> {
  return (await findClockRow(db, organizationId)) ?? unadvanced(organizationId);
}

/**
 * The clock, locked for an advance until the transaction ends, so two advances of one clock run one after
 * the other. A lock on the organization's key rather than its row: a clock never advanced has no row yet.
 */
export async function lockTestClock(db: Queryable, organizationId: string): Promise<TestClock> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('mkoba.test_clock'), hashtext($1))", [
    organizationId,
  ]);
  return findTestClock(db, organizationId);
}

/** Writes the clock's new offset (the database refuses one that goes back). */
export async function saveTestClock(
  db: Queryable,
  clock: TestClock & { advancedAt: Date },
  now: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO test_clocks (organization_id, offset_ms, advances, advanced_at, created_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (organization_id) DO UPDATE
       SET offset_ms = EXCLUDED.offset_ms, advances = EXCLUDED.advances, advanced_at = EXCLUDED.advanced_at`,
    [clock.organizationId, clock.offsetMs, clock.advances, clock.advancedAt, now],
  );
}

/** The offsets of the organizations among `organizationIds` whose clocks were advanced. */
export async function testClockOffsets(
  db: Queryable,
  organizationIds: readonly string[],
): Promise<Map<string, number>> {
  if (organizationIds.length === 0) return new Map();
  const rows = await db.query(
    'SELECT organization_id, offset_ms FROM test_clocks WHERE organization_id = ANY($1::text[])',
    [organizationIds],
  );
  return new Map(rows.map((row) => [String(row.organization_id), Number(row.offset_ms)]));
}
