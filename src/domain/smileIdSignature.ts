/**
 * Smile ID's request signature, shared by the verification provider that calls Smile ID and the simulator
 * that stands in for it: base64(HMAC-SHA256(api_key, timestamp + partner_id + "sid_request")), `timestamp`
 * an ISO 8601 time. Smile ID signs its /job_status answers and its callbacks the same way.
 */
import { createHmac } from 'node:crypto';
import { sameBytes } from './constantTime.ts';

/** The constant Smile ID appends to the signed text. */
const SIGNED_SUFFIX = 'sid_request';

export function smileIdSignature(partnerId: string, apiKey: string, timestamp: string): string {
  return createHmac('sha256', apiKey)
    .update(timestamp, 'utf8')
    .update(partnerId, 'utf8')
    .update(SIGNED_SUFFIX, 'utf8')
    .digest('base64');
}

/** Whether `signature` is the one `timestamp` gives, compared in constant time. */
export function smileIdSignatureMatches(
  partnerId: string,
  apiKey: string,
  timestamp: string,
  signature: string,
): boolean {
  const expected = Buffer.from(smileIdSignature(partnerId, apiKey, timestamp), 'base64');
  const actual = Buffer.from(signature, 'base64');
  return sameBytes(expected, actual);
}

/** A fresh timestamp and its signature, as a request or an answer carries them. */
export function smileIdSigned(
  partnerId: string,
  apiKey: string,
  now: Date,
): { timestamp: string; signature: string } {
  const timestamp = now.toISOString();
  return { timestamp, signature: smileIdSignature(partnerId, apiKey, timestamp) };
}
