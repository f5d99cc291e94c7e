/** Seeds claimed once per database, and the database's ping. */
import type { Queryable } from '../store.ts';

/** Claims a named one-time seed; false when some earlier run already claimed it. */
export async function claimSeed(db: Queryable, name: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    'INSERT INTO seeds (name, applied_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING name',
    [name, now],
  );
  return rows.length > 0;
}

export async function ping(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}

/** Whether a named one-time step has been claimed. */
export async function seedClaimed(db: Queryable, name: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM seeds WHERE name = $1', [name]);
  return rows.length > 0;
}
