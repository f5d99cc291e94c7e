/** Events: building the outbox rows that state changes write, and reading them back. */
import {
  type EventRecord,
  type EventType,
  TRANSFER_EVENT_BY_STATUS,
  type TransferEventType,
  transferEventData,
} from '../domain/events.ts';
import type { PageRequest } from '../domain/pagination.ts';
import type { Transfer } from '../domain/transferRecord.ts';
import { findEvent, insertEvents, listEvents as listEventRows } from '../store/repositories/events.ts';
import { type EnabledSubscription, enqueueDeliveriesForEvents } from '../store/repositories/outbox.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';
import { getById, listPage } from './reads.ts';

/** A new outbox row about one resource, as it stands `now`. */
export function newEvent(deps: Deps, fields: Omit<EventRecord, 'id' | 'createdAt'>, now: Date): EventRecord {
  return { id: deps.newId('event'), ...fields, createdAt: now };
}

export function transferEvent(
  deps: Deps,
  type: TransferEventType,
  transfer: Transfer,
  now: Date,
): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: transfer.organizationId,
      type,
      resourceId: transfer.id,
      data: transferEventData(transfer),
    },
    now,
  );
}

/** The event a status change emits, if any. */
export function statusEvent(deps: Deps, transfer: Transfer, now: Date): EventRecord[] {
  const type = TRANSFER_EVENT_BY_STATUS[transfer.status];
  return type ? [transferEvent(deps, type, transfer, now)] : [];
}

export const getEvent = getById<EventRecord>(findEvent, 'event');

export interface EventListRequest extends PageRequest {
  type?: EventType | undefined;
  /** Only events about this object (a transfer id). */
  resourceId?: string | undefined;
  deliverySuccess?: boolean | undefined;
}

export const listEvents = listPage<Omit<EventListRequest, keyof PageRequest>, EventRecord>(listEventRows);

/**
 * Writes events to the outbox and, in the same transaction, a webhook delivery for every subscription that
 * wants them. Every state change records its events through here.
 */
export async function recordEvents(
  tx: Queryable,
  deps: Deps,
  events: readonly EventRecord[],
  /** Where the inserts go: the transaction, or a StatementChain sent with the caller's writes. */
  writes: Queryable = tx,
  /** The organizations' enabled subscriptions, when the caller read them in this transaction already. */
  subscriptions?: readonly EnabledSubscription[],
): Promise<void> {
  if (events.length === 0) return;
  await insertEvents(writes, events);
  await enqueueDeliveriesForEvents(
    tx,
    events,
    () => deps.newId('webhookDelivery'),
    events[0]?.createdAt ?? deps.now(),
    writes,
    subscriptions,
  );
}

/** Records one event about a resource, as it stands `now` (newEvent, then recordEvents); the event recorded. */
export async function recordEvent(
  tx: Queryable,
  deps: Deps,
  now: Date,
  fields: Omit<EventRecord, 'id' | 'createdAt'>,
): Promise<EventRecord> {
  const event = newEvent(deps, fields, now);
  await recordEvents(tx, deps, [event]);
  return event;
}
