import type { Queryable } from '../store.ts';
import { toDate } from './rows.ts';

export interface OrganizationRow {
  id: string;
  name: string;
  createdAt: Date;
}

export async function findOrganizationByName(
  db: Queryable,
  name: string,
): Promise<OrganizationRow | undefined> {
  const [row] = await db.query('SELECT id, name, created_at FROM organizations WHERE name = $1', [name]);
  return row && { id: String(row.id), name: String(row.name), createdAt: toDate(row.created_at) };
}

/** Inserts unless the name exists; returns the organization either way. */
export async function ensureOrganization(
  db: Queryable,
  candidate: OrganizationRow,
): Promise<{ organization: OrganizationRow; created: boolean }> {
  const inserted = await db.query(
    'INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING id',
    [candidate.id, candidate.name, candidate.createdAt],
  );
  if (inserted.length > 0) return { organization: candidate, created: true };
  const existing = await findOrganizationByName(db, candidate.name);
  if (!existing) throw new Error(`organization '${candidate.name}' vanished during ensureOrganization`);
  return { organization: existing, created: false };
}
