/**
 * The RFC 8785 (JCS) text of a JSON value: null, booleans, finite numbers, well-formed strings, arrays, and
 * objects (their own enumerable keys sorted by UTF-16 code units; a `toJSON` method, as a Date's, stands for
 * its object). Text for text what the `canonicalize` package writes (test/canonical-json.test.ts checks it
 * against the package).
 *
 * Written here, not taken from the package, for its garbage: the package joins each nested object's text
 * into a new string at every level and keeps a set of the objects it is inside, and every transfer's evidence
 * is canonicalised, so it was the largest garbage a transfer made after the database parameters. This writes
 * every piece into one list and joins once.
 */

/** Throws a TypeError for what has no canonical text (NaN, a bigint, a lone surrogate). */
export function canonicalJson(value: unknown): string {
  const pieces: string[] = [];
  writeCanonical(value, pieces);
  return pieces.join('');
}

function writeCanonical(value: unknown, pieces: string[]): void {
  if (value === null) {
    pieces.push('null');
  } else if (typeof value === 'string') {
    pieces.push(canonicalString(value));
  } else if (typeof value === 'boolean') {
    pieces.push(String(value));
  } else if (typeof value === 'number') {
    // JCS writes a number as JavaScript does; it has no text for NaN and the infinities.
    if (!Number.isFinite(value)) throw new TypeError(`${value} has no canonical JSON text`);
    pieces.push(String(value));
  } else if (Array.isArray(value)) {
    pieces.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) pieces.push(',');
      const element: unknown = value[i];
      writeCanonical(element === undefined || typeof element === 'symbol' ? null : element, pieces);
    }
    pieces.push(']');
  } else if (typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    writeCanonical((value as { toJSON(): unknown }).toJSON(), pieces);
  } else if (typeof value === 'object') {
    writeObject(value as Record<string, unknown>, pieces);
  } else {
    throw new TypeError(`a ${typeof value} has no canonical JSON text`);
  }
}

function writeObject(object: Record<string, unknown>, pieces: string[]): void {
  pieces.push('{');
  let first = true;
  for (const key of sortedKeys(object)) {
    const member = object[key];
    if (member === undefined || typeof member === 'symbol') continue;
    if (!first) pieces.push(',');
    first = false;
    pieces.push(canonicalString(key), ':');
    writeCanonical(member, pieces);
  }
  pieces.push('}');
}

/** Objects with more keys than this are sorted by Array.prototype.sort; fewer, in place by insertion. */
const INSERTION_SORT_KEYS_MAX = 16;

/**
 * The object's keys in UTF-16 code unit order, as JCS orders them. Array.prototype.sort copies the array it
 * sorts, and most objects here have a handful of keys, which insertion sorts in place without garbage.
 */
function sortedKeys(object: object): string[] {
  const keys = Object.keys(object);
  if (keys.length > INSERTION_SORT_KEYS_MAX) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/** With the `u` flag a surrogate pair is one code point, so only a lone surrogate is in the class Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

/** JCS escapes strings as JSON.stringify does; a lone surrogate has no canonical text at all. */
function canonicalString(text: string): string {
  if (LONE_SURROGATE.test(text)) throw new TypeError('a lone surrogate has no canonical JSON text');
  return JSON.stringify(text);
}
