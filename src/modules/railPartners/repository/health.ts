/**
 * What the console's rail-partner page shows of each configuration's health, read in a few grouped
 * queries: its recent callbacks by status, its last callback, its last balance query, and the last
 * pause or resumption its circuit breaker announced.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  idBoundsOfCreated,
  nullableDate,
  nullableText,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable, Row } from '../../../store/store.ts';

export interface LastCallback {
  status: string;
  receivedAt: Date;
}

export interface LastBalanceQuery {
  id: string;
  status: string;
  failureCode: string | null;
  createdAt: Date;
  reportedAt: Date | null;
}

export interface LastPauseEvent {
  paused: boolean;
  pausedForMs: number | null;
  at: Date;
}

/**
 * Per configuration, its callbacks received since `since`, counted by status. The id bound lets the
 * (organization_id, id) index serve the window; received_at decides.
 */
export async function countCallbacksByStatus(
  db: Queryable,
  organizationId: string,
  since: Date,
): Promise<Map<string, Record<string, number>>> {
  const { idGte } = idBoundsOfCreated(ID_PREFIXES.railCallback, { createdGte: since });
  const rows = await db.query(
    `SELECT config_id, status, count(*) AS n FROM rail_callbacks
      WHERE organization_id = $1 AND received_at >= $2 AND ($3::text IS NULL OR id >= $3)
      GROUP BY config_id, status`,
    [organizationId, since, idGte ?? null],
  );
  const counts = new Map<string, Record<string, number>>();
  for (const row of rows) {
    const byStatus = counts.get(String(row.config_id)) ?? {};
    byStatus[String(row.status)] = Number(row.n);
    counts.set(String(row.config_id), byStatus);
  }
  return counts;
}

/** One organization's rows, one a configuration, keyed by the configuration id its `keyColumn` holds. */
async function onePerConfiguration<T>(
  db: Queryable,
  organizationId: string,
  query: { sql: string; keyColumn: 'config_id' | 'resource_id' },
  fromRow: (row: Row) => T,
): Promise<Map<string, T>> {
  const rows = await db.query(query.sql, [organizationId]);
  return new Map(rows.map((row) => [String(row[query.keyColumn]), fromRow(row)]));
}

/** Per configuration, the last callback it received. */
export function lastCallbacks(db: Queryable, organizationId: string): Promise<Map<string, LastCallback>> {
  return onePerConfiguration(
    db,
    organizationId,
    {
      sql: `SELECT c.id AS config_id, cb.status, cb.received_at FROM rail_partner_configs c
       CROSS JOIN LATERAL (SELECT status, received_at FROM rail_callbacks
         WHERE organization_id = c.organization_id AND config_id = c.id ORDER BY id DESC LIMIT 1) cb
      WHERE c.organization_id = $1`,
      keyColumn: 'config_id',
    },
    (row) => ({ status: String(row.status), receivedAt: toDate(row.received_at) }),
  );
}

/** Per configuration, the last balance query asked of it. */
export function lastBalanceQueries(
  db: Queryable,
  organizationId: string,
): Promise<Map<string, LastBalanceQuery>> {
  return onePerConfiguration(
    db,
    organizationId,
    {
      sql: `SELECT DISTINCT ON (config_id) config_id, id, status, failure_code, created_at, reported_at
       FROM rail_partner_balance_queries
      WHERE organization_id = $1 ORDER BY config_id, created_at DESC, id DESC`,
      keyColumn: 'config_id',
    },
    (row) => ({
      id: String(row.id),
      status: String(row.status),
      failureCode: nullableText(row.failure_code),
      createdAt: toDate(row.created_at),
      reportedAt: nullableDate(row.reported_at),
    }),
  );
}

/** Per configuration, the last `rail_partner.paused` or `rail_partner.resumed` event announced for it. */
export function lastPauseEvents(db: Queryable, organizationId: string): Promise<Map<string, LastPauseEvent>> {
  return onePerConfiguration(
    db,
    organizationId,
    {
      sql: `SELECT c.id AS resource_id, e.type, e.data, e.created_at FROM rail_partner_configs c
       CROSS JOIN LATERAL (SELECT type, data, created_at FROM events
         WHERE resource_id = c.id AND organization_id = c.organization_id
           AND type IN ('rail_partner.paused', 'rail_partner.resumed')
         ORDER BY id DESC LIMIT 1) e
      WHERE c.organization_id = $1`,
      keyColumn: 'resource_id',
    },
    (row) => {
      const data = toJsonObject<{ paused_for_ms?: number }>(row.data);
      return {
        paused: row.type === 'rail_partner.paused',
        pausedForMs: typeof data.paused_for_ms === 'number' ? data.paused_for_ms : null,
        at: toDate(row.created_at),
      };
    },
  );
}
