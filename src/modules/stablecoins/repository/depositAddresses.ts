/** Deposit addresses: a stablecoin wallet's address on each network, issued once. */
import type { DepositAddress } from '../../../domain/stablecoins.ts';
import { recordFinderBy, rowTable } from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import { toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

const ADDRESSES = rowTable<DepositAddress>('deposit_addresses', {
  id: String,
  organizationId: String,
  walletId: String,
  asset: stored,
  network: stored,
  address: String,
  createdAt: toDate,
});
const { columns: ADDRESS_COLUMNS, fromRow: addressFromRow } = ADDRESSES;

/** A wallet's address on a network (one at most). */
const findWalletAddressOn = recordFinderBy(ADDRESSES, 'wallet_id', 'network');

/**
 * Inserts the wallet's address on the network unless it has one; returns the one it has either way. No
 * conflict target: a concurrent request for the same wallet and network collides on both unique indexes
 * (the address is a function of the wallet and network), and either must end in the existing row.
 */
export async function insertDepositAddressIfAbsent(
  db: Queryable,
  a: DepositAddress,
): Promise<DepositAddress> {
  const [inserted] = await db.query(
    `INSERT INTO deposit_addresses (${ADDRESS_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT DO NOTHING RETURNING ${ADDRESS_COLUMNS}`,
    [a.id, a.organizationId, a.walletId, a.asset, a.network, a.address, a.createdAt],
  );
  if (inserted) return addressFromRow(inserted);
  const existing = await findWalletAddressOn(db, a.walletId, a.network);
  if (!existing) throw new Error('deposit address vanished after insert conflict');
  return existing;
}

export async function listDepositAddresses(
  db: Queryable,
  organizationId: string,
  walletId: string,
): Promise<DepositAddress[]> {
  const rows = await db.query(
    `SELECT ${ADDRESS_COLUMNS} FROM deposit_addresses WHERE organization_id = $1 AND wallet_id = $2 ORDER BY id`,
    [organizationId, walletId],
  );
  return rows.map(addressFromRow);
}

/** The deposit address on a network, whichever organization holds it (the chain knows no organizations). */
export const findDepositAddressByAddress = recordFinderBy(ADDRESSES, 'network', 'address');
