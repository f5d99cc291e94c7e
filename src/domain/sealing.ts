/**
 * Envelope encryption for secrets at rest (webhook signing secrets, sealed idempotent responses, and later
 * partner credentials). Each value is encrypted with its own random data key (AES-256-GCM); the data key
 * is encrypted ("wrapped") with a master key, also AES-256-GCM, and the master key's id is kept beside it.
 * Rotating the master key therefore re-wraps 32-byte data keys and never touches the values themselves.
 *
 * A sealed value is one printable string:
 *
 *   sealed.v1.<master key id>.<base64url(nonce | wrapped data key | tag)>.<base64url(nonce | ciphertext | tag)>
 *
 * The wrapped data key is bound to its master key id, and the ciphertext to a caller-given context (such as
 * the subscription it belongs to), so a sealed value copied to another row does not open there.
 *
 * Pure: keys and random bytes are arguments; no I/O, no clock.
 */
import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';

/** A master key and a data key are 256-bit AES keys. */
export const MASTER_KEY_BYTES = 32;
export const DATA_KEY_BYTES = 32;
/** AES-GCM's standard 96-bit nonce, fresh for every encryption, and its full 128-bit tag. */
export const SEAL_NONCE_BYTES = 12;
export const SEAL_TAG_BYTES = 16;
/** Bytes of the HMAC that name a master key. */
const MASTER_KEY_ID_BYTES = 8;
export const MASTER_KEY_ID_PREFIX = 'ek_';

const SEALED_PREFIX = 'sealed';
const SEALED_VERSION = 'v1';
const CIPHER = 'aes-256-gcm';

export interface MasterKey {
  /** `ek_` + 16 hex digits derived from the key: names it in stored rows, logs and errors, revealing nothing. */
  id: string;
  bytes: Uint8Array;
}

/** The master key that seals now, and older ones that may still open what they sealed. */
export interface Keyring {
  current: MasterKey | undefined;
  previous: readonly MasterKey[];
}

/** A failure to seal or open: a missing or unknown master key, or a value that does not authenticate. */
export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

/**
 * A master key as written in the environment: 32 bytes in hex (64 digits) or base64 (standard or URL-safe,
 * padded or not). Undefined for anything else, including the right encoding of the wrong length.
 */
export function parseMasterKey(text: string): Uint8Array | undefined {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return new Uint8Array(Buffer.from(trimmed, 'hex'));
  if (!/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) return undefined;
  const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === MASTER_KEY_BYTES ? new Uint8Array(bytes) : undefined;
}

/** The key's id: an HMAC of a fixed label under the key, so equal keys get equal ids and the id reveals nothing. */
export function masterKeyId(bytes: Uint8Array): string {
  const digest = createHmac('sha256', bytes).update('mkoba master key id').digest();
  return MASTER_KEY_ID_PREFIX + digest.subarray(0, MASTER_KEY_ID_BYTES).toString('hex');
}

export function masterKey(bytes: Uint8Array): MasterKey {
  if (bytes.length !== MASTER_KEY_BYTES) throw new RangeError(`a master key is ${MASTER_KEY_BYTES} bytes`);
  return { id: masterKeyId(bytes), bytes };
}

/** A keyring from the current key and older ones; an older key equal to the current one is dropped. */
export function keyringOf(current: Uint8Array | undefined, previous: readonly Uint8Array[] = []): Keyring {
  const currentKey = current === undefined ? undefined : masterKey(current);
  const seen = new Set(currentKey ? [currentKey.id] : []);
  const older: MasterKey[] = [];
  for (const bytes of previous) {
    const key = masterKey(bytes);
    if (seen.has(key.id)) continue;
    seen.add(key.id);
    older.push(key);
  }
  return { current: currentKey, previous: older };
}

/** Every key id the keyring can open, current first. */
export function keyringIds(keyring: Keyring): string[] {
  return [...(keyring.current ? [keyring.current.id] : []), ...keyring.previous.map((k) => k.id)];
}

function findKey(keyring: Keyring, id: string): MasterKey {
  const key = keyring.current?.id === id ? keyring.current : keyring.previous.find((k) => k.id === id);
  if (!key) throw new SealError(`sealed under master key ${id}, which is not in the keyring`);
  return key;
}

function currentKey(keyring: Keyring): MasterKey {
  if (!keyring.current) throw new SealError('no master key is configured to seal with');
  return keyring.current;
}

function encrypt(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad: string): Buffer {
  const cipher = createCipheriv(CIPHER, key, nonce, { authTagLength: SEAL_TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function decrypt(key: Uint8Array, box: Buffer, aad: string, what: string): Buffer {
  if (box.length < SEAL_NONCE_BYTES + SEAL_TAG_BYTES) throw new SealError(`${what} is truncated`);
  const nonce = box.subarray(0, SEAL_NONCE_BYTES);
  const tag = box.subarray(box.length - SEAL_TAG_BYTES);
  const decipher = createDecipheriv(CIPHER, key, nonce, { authTagLength: SEAL_TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([
      decipher.update(box.subarray(SEAL_NONCE_BYTES, box.length - SEAL_TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw new SealError(`${what} does not authenticate (altered, or sealed for another record)`);
  }
}

const wrapContext = (keyId: string) => `mkoba data key|${keyId}`;

interface Envelope {
  keyId: string;
  wrappedKey: Buffer;
  payload: Buffer;
}

function parseEnvelope(sealed: string): Envelope {
  const parts = sealed.split('.');
  if (parts.length !== 5 || parts[0] !== SEALED_PREFIX || parts[1] !== SEALED_VERSION) {
    throw new SealError('not a sealed value (expected sealed.v1.…)');
  }
  const [, , keyId = '', wrapped = '', payload = ''] = parts;
  return {
    keyId,
    wrappedKey: Buffer.from(wrapped, 'base64url'),
    payload: Buffer.from(payload, 'base64url'),
  };
}

function formatEnvelope(e: Envelope): string {
  return [
    SEALED_PREFIX,
    SEALED_VERSION,
    e.keyId,
    e.wrappedKey.toString('base64url'),
    e.payload.toString('base64url'),
  ].join('.');
}

export function isSealed(value: string): boolean {
  return value.startsWith(`${SEALED_PREFIX}.${SEALED_VERSION}.`);
}

/** The id of the master key a sealed value's data key is wrapped with. */
export function sealedKeyId(sealed: string): string {
  return parseEnvelope(sealed).keyId;
}

/**
 * Seals `plaintext` under a fresh data key wrapped by the keyring's current master key. `context` names what
 * the value belongs to; opening needs the same context. `random` supplies the data key and both nonces.
 */
export function seal(
  keyring: Keyring,
  plaintext: string,
  context: string,
  random: (size: number) => Uint8Array,
): string {
  const master = currentKey(keyring);
  const dataKey = random(DATA_KEY_BYTES);
  return formatEnvelope({
    keyId: master.id,
    wrappedKey: encrypt(master.bytes, random(SEAL_NONCE_BYTES), dataKey, wrapContext(master.id)),
    payload: encrypt(dataKey, random(SEAL_NONCE_BYTES), Buffer.from(plaintext, 'utf8'), context),
  });
}

function unwrapDataKey(keyring: Keyring, envelope: Envelope): Buffer {
  const master = findKey(keyring, envelope.keyId);
  const dataKey = decrypt(
    master.bytes,
    envelope.wrappedKey,
    wrapContext(master.id),
    `the data key under ${master.id}`,
  );
  if (dataKey.length !== DATA_KEY_BYTES) throw new SealError('the data key has the wrong length');
  return dataKey;
}

/** The plaintext of a sealed value, given the context it was sealed for. */
export function open(keyring: Keyring, sealed: string, context: string): string {
  const envelope = parseEnvelope(sealed);
  const dataKey = unwrapDataKey(keyring, envelope);
  return decrypt(dataKey, envelope.payload, context, 'the sealed value').toString('utf8');
}

/**
 * The same value with its data key wrapped by the current master key instead (unchanged when it already
 * is). The ciphertext is kept as it is: only the 32-byte data key is decrypted and encrypted again.
 */
export function rewrap(keyring: Keyring, sealed: string, random: (size: number) => Uint8Array): string {
  const master = currentKey(keyring);
  const envelope = parseEnvelope(sealed);
  if (envelope.keyId === master.id) return sealed;
  const dataKey = unwrapDataKey(keyring, envelope);
  return formatEnvelope({
    keyId: master.id,
    wrappedKey: encrypt(master.bytes, random(SEAL_NONCE_BYTES), dataKey, wrapContext(master.id)),
    payload: envelope.payload,
  });
}
