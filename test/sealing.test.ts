/** Envelope encryption, pure: sealing, opening, binding to a context, tampering, key ids and re-wrapping. */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isSealed,
  keyringIds,
  keyringOf,
  MASTER_KEY_BYTES,
  masterKeyId,
  open,
  parseMasterKey,
  rewrap,
  SealError,
  seal,
  sealedKeyId,
} from '../src/domain/sealing.ts';

const random = (size: number) => new Uint8Array(randomBytes(size));
const keyA = random(MASTER_KEY_BYTES);
const keyB = random(MASTER_KEY_BYTES);
const SECRET = 'whsec_003aUlTJC7tjlCTQj2uNU3MFagCXG9LRKRcwGkBIDlf';

describe('sealing', () => {
  it('opens what it sealed, for any text, and never shows the plaintext', () => {
    const keyring = keyringOf(keyA);
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        fc.string({ maxLength: 40 }),
        (text, context) => {
          const sealed = seal(keyring, text, context, random);
          expect(isSealed(sealed)).toBe(true);
          expect(open(keyring, sealed, context)).toBe(text);
        },
      ),
    );
    const sealed = seal(keyring, SECRET, 'webhook_secret:whsub_1', random);
    expect(sealed).not.toContain('whsec_');
    expect(sealed).not.toContain(Buffer.from(SECRET).toString('base64url').slice(0, 12));
    expect(sealedKeyId(sealed)).toBe(masterKeyId(keyA));
  });

  it('uses a fresh data key and nonces each time: the same secret seals differently', () => {
    const keyring = keyringOf(keyA);
    const first = seal(keyring, SECRET, 'c', random);
    const second = seal(keyring, SECRET, 'c', random);
    expect(first).not.toBe(second);
    expect(first.split('.')[3]).not.toBe(second.split('.')[3]);
  });

  it('does not open for another context, another key, or after any change', () => {
    const sealed = seal(keyringOf(keyA), SECRET, 'webhook_secret:whsub_1', random);
    expect(() => open(keyringOf(keyA), sealed, 'webhook_secret:whsub_2')).toThrow(SealError);
    expect(() => open(keyringOf(keyB), sealed, 'webhook_secret:whsub_1')).toThrow(
      new RegExp(`sealed under master key ${masterKeyId(keyA)}, which is not in the keyring`),
    );
    // One altered byte, in the wrapped data key or in the ciphertext, and it no longer authenticates.
    const parts = sealed.split('.');
    for (const index of [3, 4]) {
      const altered = [...parts];
      const bytes = Buffer.from(altered[index] as string, 'base64url');
      bytes[bytes.length - 20] = (bytes[bytes.length - 20] ?? 0) ^ 1;
      altered[index] = bytes.toString('base64url');
      expect(() => open(keyringOf(keyA), altered.join('.'), 'webhook_secret:whsub_1')).toThrow(SealError);
    }
    expect(() => open(keyringOf(keyA), SECRET, 'c')).toThrow(/not a sealed value/);
  });

  it('refuses to seal with no current key', () => {
    expect(() => seal(keyringOf(undefined, [keyA]), SECRET, 'c', random)).toThrow(/no master key/);
  });

  it('opens with a previous key, and re-wraps under the current one without touching the ciphertext', () => {
    const old = seal(keyringOf(keyA), SECRET, 'c', random);
    const rotated = keyringOf(keyB, [keyA]);
    expect(open(rotated, old, 'c')).toBe(SECRET);
    const rewrapped = rewrap(rotated, old, random);
    expect(sealedKeyId(rewrapped)).toBe(masterKeyId(keyB));
    expect(rewrapped.split('.')[4]).toBe(old.split('.')[4]);
    expect(open(keyringOf(keyB), rewrapped, 'c')).toBe(SECRET);
    expect(() => open(keyringOf(keyA), rewrapped, 'c')).toThrow(SealError);
    expect(rewrap(rotated, rewrapped, random)).toBe(rewrapped);
  });

  it('names keys by an id derived from the key, and drops repeats from a keyring', () => {
    expect(masterKeyId(keyA)).toMatch(/^ek_[0-9a-f]{16}$/);
    expect(masterKeyId(keyA)).toBe(masterKeyId(Uint8Array.from(keyA)));
    expect(masterKeyId(keyA)).not.toBe(masterKeyId(keyB));
    expect(keyringIds(keyringOf(keyA, [keyB, keyA, keyB]))).toEqual([masterKeyId(keyA), masterKeyId(keyB)]);
  });

  it('reads a master key in hex or base64 (standard or URL-safe), 32 bytes exactly', () => {
    const bytes = Buffer.from(keyA);
    for (const text of [
      bytes.toString('hex'),
      bytes.toString('hex').toUpperCase(),
      bytes.toString('base64'),
      bytes.toString('base64url'),
      ` ${bytes.toString('base64')}\n`,
    ]) {
      expect(parseMasterKey(text), text).toEqual(new Uint8Array(bytes));
    }
    for (const bad of [
      '',
      'secret',
      bytes.subarray(0, 31).toString('hex'),
      Buffer.concat([bytes, Buffer.from([1])]).toString('hex'),
      bytes.subarray(0, 31).toString('base64'),
      randomBytes(33).toString('base64'),
      `${bytes.toString('hex').slice(0, 63)}g`,
    ]) {
      expect(parseMasterKey(bad), bad).toBeUndefined();
    }
  });
});
