/** Payout requests sent to a partner without an idempotency key: recorded before they go out, then acknowledged. */
import { columnFinderBy } from '../../../store/repositories/records.ts';
import type { Queryable } from '../../../store/store.ts';

/** True when this call recorded the request; false when one was recorded for the payout before. */
export async function insertPayoutRequest(
  db: Queryable,
  request: { transferId: string; organizationId: string; configId: string; sentAt: Date },
): Promise<boolean> {
  const inserted = await db.query(
    `INSERT INTO rail_payout_requests (transfer_id, organization_id, config_id, sent_at)
     VALUES ($1, $2, $3, $4) ON CONFLICT (transfer_id) DO NOTHING RETURNING transfer_id`,
    [request.transferId, request.organizationId, request.configId, request.sentAt],
  );
  return inserted.length === 1;
}

export async function acknowledgePayoutRequest(
  db: Queryable,
  organizationId: string,
  transferId: string,
  partnerRequestId: string,
  at: Date,
): Promise<void> {
  await db.query(
    `UPDATE rail_payout_requests SET partner_request_id = $3, acknowledged_at = $4
     WHERE organization_id = $1 AND transfer_id = $2 AND partner_request_id IS NULL`,
    [organizationId, transferId, partnerRequestId, at],
  );
}

/** Forgets a request the partner refused outright (it never reached the payment system). */
export async function deletePayoutRequest(
  db: Queryable,
  organizationId: string,
  transferId: string,
): Promise<void> {
  await db.query(
    'DELETE FROM rail_payout_requests WHERE organization_id = $1 AND transfer_id = $2 AND partner_request_id IS NULL',
    [organizationId, transferId],
  );
}

/** The partner's id of the payout's request, once acknowledged. */
export const findPayoutRequestPartnerId = columnFinderBy(
  'rail_payout_requests',
  'partner_request_id',
  String,
  'organization_id',
  'transfer_id',
);
