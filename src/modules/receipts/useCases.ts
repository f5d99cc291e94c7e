/**
 * Receipts: issued on request for a settled (or since returned) transfer, once; verified by code by anyone
 * who holds one, without an API key.
 */

import type { Deps } from '../../app/deps.ts';
import { AppError, resourceMissing } from '../../domain/errors.ts';
import { findOrganization } from '../../store/repositories/organizations.ts';
import { findTransfer, getTransfer } from '../transfers/index.ts';
import {
  formatReceiptCode,
  normaliseReceiptCode,
  RECEIPT_CODE_RANDOM_BYTES,
  type Receipt,
} from './domain.ts';
import { findFinalEntryId, findReceiptByCode, issueReceiptRow } from './repository.ts';

export async function getReceipt(deps: Deps, organizationId: string, transferId: string): Promise<Receipt> {
  const transfer = await getTransfer(deps, organizationId, transferId);
  const entryId = transfer.settledAt === null ? undefined : await findFinalEntryId(deps.store, transfer.id);
  if (entryId === undefined) {
    throw new AppError({
      status: 409,
      code: 'receipt_unavailable',
      title: 'No receipt yet',
      detail: `Transfer ${transfer.id} is ${transfer.status}; a receipt is issued once it has settled.`,
    });
  }
  const row = await issueReceiptRow(deps.store, {
    code: formatReceiptCode(deps.randomBytes(RECEIPT_CODE_RANDOM_BYTES)),
    organizationId,
    transferId: transfer.id,
    entryId,
    issuedAt: deps.now(),
  });
  const organization = await findOrganization(deps.store, organizationId);
  return {
    code: row.code,
    organizationName: organization?.name ?? organizationId,
    transfer,
    entryId: row.entryId,
    issuedAt: row.issuedAt,
  };
}

/** The receipt a code belongs to, as it stands now (a returned transfer says so), or 404. */
export async function verifyReceipt(deps: Deps, rawCode: string): Promise<Receipt> {
  const code = normaliseReceiptCode(rawCode);
  const row = await findReceiptByCode(deps.store, code);
  const transfer = row && (await findTransfer(deps.store, row.organizationId, row.transferId));
  if (!row || !transfer) throw resourceMissing('receipt', code, 'code');
  const organization = await findOrganization(deps.store, row.organizationId);
  return {
    code,
    organizationName: organization?.name ?? row.organizationId,
    transfer,
    entryId: row.entryId,
    issuedAt: row.issuedAt,
  };
}
