/** Which rail partner configuration carries each payout (transfer_rail_partners), fixed once. */
import { columnFinderBy } from '../../../store/repositories/records.ts';
import type { Queryable } from '../../../store/store.ts';

/** The configuration pinned to carry the transfer, if any. */
export const findTransferRailPartner = columnFinderBy(
  'transfer_rail_partners',
  'rail_partner_id',
  String,
  'transfer_id',
);

/**
 * Pins `configId` to carry the transfer unless another was pinned first; returns the one that is pinned
 * (the first one wins, so two workers resolving at once agree).
 */
export async function pinTransferRailPartner(
  db: Queryable,
  pin: { transferId: string; organizationId: string; configId: string; at: Date },
): Promise<string> {
  const [inserted] = await db.query<{ rail_partner_id: string }>(
    `INSERT INTO transfer_rail_partners (transfer_id, organization_id, rail_partner_id, pinned_at)
     VALUES ($1, $2, $3, $4) ON CONFLICT (transfer_id) DO NOTHING RETURNING rail_partner_id`,
    [pin.transferId, pin.organizationId, pin.configId, pin.at],
  );
  return inserted?.rail_partner_id ?? (await findTransferRailPartner(db, pin.transferId)) ?? pin.configId;
}
