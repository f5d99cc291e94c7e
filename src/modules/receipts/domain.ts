/**
 * Receipts of settled transfers, pure: the verification code's format and the receipt's content. The code
 * is random (100 bits), issued once per transfer and looked up to verify, so it proves nothing by itself
 * and cannot be forged by computing it.
 */
import { validationError } from '../../domain/errors.ts';
import { base32OfRandom } from '../../domain/ids.ts';
import { formatAmount } from '../../domain/money.ts';
import { feeOf, maskedDestination, maskedWallet, type Transfer } from '../../domain/transferRecord.ts';

export const RECEIPT_CODE_PREFIX = 'MKR';
/** Crockford base32 characters after the prefix: 20 carry 100 bits. */
export const RECEIPT_CODE_CHARS = 20;
/** Random bytes a code needs (13 bytes = 104 bits, of which 100 are used). */
export const RECEIPT_CODE_RANDOM_BYTES = 13;
const GROUP_CHARS = 4;
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `MKR-7F3K-Q9ZD-2M8B-XH4T-P6WC`: grouped for reading aloud. */
export function formatReceiptCode(random: Uint8Array): string {
  const chars = base32OfRandom(random, RECEIPT_CODE_RANDOM_BYTES, RECEIPT_CODE_CHARS).toUpperCase();
  const groups = chars.match(new RegExp(`.{${GROUP_CHARS}}`, 'g')) ?? [];
  return [RECEIPT_CODE_PREFIX, ...groups].join('-');
}

/** A code as a person may type it (any case, with or without dashes, O for 0, I and L for 1) in its canonical form. */
export function normaliseReceiptCode(raw: string, param = 'code'): string {
  const compact = raw.trim().toUpperCase().replace(/[-\s]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  const body = compact.startsWith(RECEIPT_CODE_PREFIX) ? compact.slice(RECEIPT_CODE_PREFIX.length) : compact;
  if (body.length !== RECEIPT_CODE_CHARS || [...body].some((c) => !ALPHABET.includes(c))) {
    throw validationError(
      param,
      `${param} must be a receipt code such as MKR-7F3K-Q9ZD-2M8B-XH4T-P6WC`,
      'invalid_format',
    );
  }
  const groups = body.match(new RegExp(`.{${GROUP_CHARS}}`, 'g')) ?? [];
  return [RECEIPT_CODE_PREFIX, ...groups].join('-');
}

export interface Receipt {
  code: string;
  organizationName: string;
  transfer: Transfer;
  /** The journal entry that made the transfer final (a `post` of its hold, or a `direct` entry). */
  entryId: string;
  issuedAt: Date;
}

/** What a receipt says, as the API and the printable page present it. */
export function receiptFields(receipt: Receipt) {
  const t = receipt.transfer;
  return {
    code: receipt.code,
    organization: receipt.organizationName,
    transfer: t.id,
    amount: formatAmount(t.amountMinor, t.currency),
    fee: formatAmount(feeOf(t), t.currency),
    total: formatAmount(t.amountMinor + feeOf(t), t.currency),
    currency: t.currency,
    rail: t.rail,
    rail_reference: t.railReference,
    journal_entry: receipt.entryId,
    source: t.sourceWalletId,
    destination: maskedDestination(t.destination),
    status: t.status,
    settled_at: t.settledAt?.toISOString() ?? null,
    issued_at: receipt.issuedAt.toISOString(),
  };
}

/**
 * What the public check (`GET /v1/receipts/verify`, no API key) shows: the receipt's fields with the
 * paying wallet masked like the destination, since anyone holding the code sees them.
 */
export function publicReceiptFields(receipt: Receipt) {
  const fields = receiptFields(receipt);
  return { ...fields, source: fields.source === null ? null : maskedWallet(fields.source) };
}
