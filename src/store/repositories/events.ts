/** The event outbox: events appended in batches, found by id and listed newest first. */
import type { EventRecord } from '../../domain/events.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Queryable } from '../store.ts';
import { organizationRecordFinder } from './records.ts';
import { columnRows } from './rowMappers.ts';
import {
  fieldArrays,
  type KeysetFilter,
  newestFirstConditions,
  nullableText,
  toDate,
  toJsonObject,
} from './rows.ts';

export type { EventRecord };

/**
 * Appends outbox rows; one statement for any number of events. The data documents travel as one JSON array
 * (`jsonb_array_elements`), not as elements of a text array: an array literal would escape every quote of
 * every document again, the largest garbage a transfer made.
 */
export async function insertEvents(db: Queryable, events: readonly EventRecord[]): Promise<void> {
  if (events.length === 0) return;
  await db.query(
    `INSERT INTO events (id, organization_id, type, resource_id, data, created_at)
     SELECT * FROM ROWS FROM (unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), unnest($4::text[]),
                              jsonb_array_elements($5::jsonb), unnest($6::timestamptz[]))`,
    [
      ...fieldArrays(events, 'id', 'organizationId', 'type', 'resourceId'),
      JSON.stringify(events.map((e) => e.data)),
      events.map((e) => e.createdAt.toISOString()),
    ],
  );
}

/** The columns an event is read with (for readers outside this file, such as exports), and its row's mapper. */
export const { columns: EVENT_COLUMNS, fromRow: eventFromRow } = columnRows<EventRecord>({
  id: String,
  organizationId: String,
  type: String,
  resourceId: nullableText,
  data: toJsonObject<Record<string, unknown>>,
  createdAt: toDate,
});

export const findEvent = organizationRecordFinder({
  name: 'events',
  columns: EVENT_COLUMNS,
  fromRow: eventFromRow,
});

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
  const { conditions, params } = newestFirstConditions({
    prefix: ID_PREFIXES.event,
    organizationId,
    filter,
    equal: [
      ['type', filter.type],
      ['resource_id', filter.resourceId],
    ],
  });
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
    `SELECT ${EVENT_COLUMNS} FROM events
      WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(eventFromRow);
}
