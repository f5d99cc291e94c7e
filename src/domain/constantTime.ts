/**
 * Comparing a secret (a signature, a token, a hash) with what was presented, in time that depends only on
 * their lengths, so the comparison does not tell an attacker how much of a guess was right.
 */
import { timingSafeEqual } from 'node:crypto';

/** Whether two byte strings are equal; unequal lengths answer at once (the length is not the secret). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether two texts are equal as UTF-8 bytes, compared as sameBytes. */
export function sameText(a: string, b: string): boolean {
  return sameBytes(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
