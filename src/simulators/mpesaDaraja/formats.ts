/**
 * The shapes of M-Pesa's generated values, as Daraja's samples show them: receipts, request and conversation
 * ids, and Nairobi times in its two formats.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';

/** Kenya keeps East Africa Time all year: UTC+3. */
const NAIROBI_OFFSET_MS = 3 * 60 * 60 * 1000;

const RECEIPT_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** An M-Pesa receipt: ten upper-case letters and digits, starting with a letter (e.g. NLJ41HAY6Q). */
export function receiptNumber(): string {
  let receipt = RECEIPT_ALPHABET[randomInt(26)] ?? 'S';
  while (receipt.length < 10) receipt += RECEIPT_ALPHABET[randomInt(RECEIPT_ALPHABET.length)];
  return receipt;
}

/** A failed transaction's TransactionID: the receipt's first three characters and zeros (NLJ0000000). */
export function placeholderTransactionId(receipt: string): string {
  return `${receipt.slice(0, 3)}0000000`;
}

/** Like Daraja's requestId and generated OriginatorConversationIDs: 29115-34620561-1. */
export function requestIdLike(): string {
  return `${randomInt(10_000, 99_999)}-${randomInt(10_000_000, 99_999_999)}-1`;
}

/** Like AG_20191219_00005797af5d7d75f652. */
export function conversationId(): string {
  return `AG_${compactDateTime(new Date()).toString().slice(0, 8)}_${randomBytes(10).toString('hex')}`;
}

/** Like ws_CO_191220191020363925. */
export function checkoutRequestId(): string {
  const digest = createHash('sha256').update(randomBytes(16)).digest('hex').slice(0, 6);
  return `ws_CO_${compactDateTime(new Date())}${digest}`;
}

function nairobiParts(at: Date): string[] {
  const local = new Date(at.getTime() + NAIROBI_OFFSET_MS).toISOString();
  return [
    local.slice(0, 4),
    local.slice(5, 7),
    local.slice(8, 10),
    local.slice(11, 13),
    local.slice(14, 16),
    local.slice(17, 19),
  ];
}

/** Nairobi time as the number YYYYMMDDHHmmss (STK TransactionDate, status InitiatedTime). */
export function compactDateTime(at: Date): number {
  return Number(nairobiParts(at).join(''));
}

/** Nairobi time as DD.MM.YYYY HH:mm:ss (B2C TransactionCompletedDateTime). */
export function dottedDateTime(at: Date): string {
  const [year, month, day, hour, minute, second] = nairobiParts(at);
  return `${day}.${month}.${year} ${hour}:${minute}:${second}`;
}
