import { TRANSFER_EVENT_BY_STATUS, type TransferEventType, transferEventData } from '../domain/events.ts';
import type { Transfer } from '../domain/transferRecord.ts';
import type { EventRecord } from '../store/repositories/events.ts';
import type { Deps } from './deps.ts';

export function transferEvent(
  deps: Deps,
  type: TransferEventType,
  transfer: Transfer,
  now: Date,
): EventRecord {
  return {
    id: deps.newId('event'),
    organizationId: transfer.organizationId,
    type,
    resourceId: transfer.id,
    data: transferEventData(transfer),
    createdAt: now,
  };
}

/** The event a status change emits, if any. */
export function statusEvent(deps: Deps, transfer: Transfer, now: Date): EventRecord[] {
  const type = TRANSFER_EVENT_BY_STATUS[transfer.status];
  return type ? [transferEvent(deps, type, transfer, now)] : [];
}
