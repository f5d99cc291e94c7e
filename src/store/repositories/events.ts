import type { EventRecord } from '../../domain/events.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Queryable } from '../store.ts';
import { type KeysetFilter, keysetConditions, toDate, toJsonObject } from './rows.ts';

export type { EventRecord };

/** Appends outbox rows; one statement for any number of events. */
export async function insertEvents(db: Queryable, events: readonly EventRecord[]): Promise<void> {
  if (events.length === 0) return;
  await db.query(
    `INSERT INTO events (id, organization_id, type, resource_id, data, created_at)
     SELECT id, organization_id, type, resource_id, data::jsonb, created_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
         AS v(id, organization_id, type, resource_id, data, created_at)`,
    [
      events.map((e) => e.id),
      events.map((e) => e.organizationId),
      events.map((e) => e.type),
      events.map((e) => e.resourceId),
      events.map((e) => JSON.stringify(e.data)),
      events.map((e) => e.createdAt.toISOString()),
    ],
  );
}

export function eventFromRow(row: Record<string, unknown>): EventRecord {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    type: String(row.type),
    resourceId: row.resource_id === null ? null : String(row.resource_id),
    data: toJsonObject<Record<string, unknown>>(row.data),
    createdAt: toDate(row.created_at),
  };
}

export async function findEvent(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<EventRecord | undefined> {
  const [row] = await db.query(
    'SELECT id, organization_id, type, resource_id, data, created_at FROM events WHERE organization_id = $1 AND id = $2',
    [organizationId, id],
  );
  return row && eventFromRow(row);
}

export interface EventFilter extends KeysetFilter {
  type?: string | undefined;
  resourceId?: string | undefined;
  /** false: events with a webhook delivery not (yet) succeeded; true: events every delivery of which succeeded. */
  deliverySuccess?: boolean | undefined;
}

export async function listEvents(
  db: Queryable,
  organizationId: string,
  filter: EventFilter,
  rowsMax: number,
): Promise<EventRecord[]> {
  const params: unknown[] = [organizationId];
  const conditions = ['organization_id = $1', ...keysetConditions(filter, params, '', ID_PREFIXES.event)];
  for (const [column, value] of [
    ['type', filter.type],
    ['resource_id', filter.resourceId],
  ] as const) {
    if (value === undefined) continue;
    params.push(value);
    conditions.push(`${column} = $${params.length}`);
  }
  if (filter.deliverySuccess === false) {
    conditions.push(
      "EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.status <> 'succeeded')",
    );
  }
  if (filter.deliverySuccess === true) {
    conditions.push(
      "EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id) AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.status <> 'succeeded')",
    );
  }
  params.push(rowsMax);
  const rows = await db.query(
    `SELECT id, organization_id, type, resource_id, data, created_at FROM events
      WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(eventFromRow);
}

/** The columns an event is read with (for readers outside this file, such as exports). */
export const EVENT_COLUMNS = 'id, organization_id, type, resource_id, data, created_at';
