/** Where a custody partner configuration's next look for missed deposits starts (its high-water mark). */

import { columnFinderBy } from '../../../store/repositories/records.ts';
import { toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

/** The creation time after which the configuration's next look reads; undefined before its first. */
export const depositMarkOf = columnFinderBy('custody_deposit_marks', 'read_after', toDate, 'config_id');

/** Records where the next look starts. Passes running at once each write a point they read up to. */
export async function saveDepositMark(
  db: Queryable,
  configId: string,
  readAfter: Date,
  now: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO custody_deposit_marks (config_id, read_after, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (config_id) DO UPDATE SET read_after = EXCLUDED.read_after, updated_at = EXCLUDED.updated_at`,
    [configId, readAfter, now],
  );
}
