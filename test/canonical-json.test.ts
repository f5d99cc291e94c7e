/**
 * Mkoba's canonical JSON writer against the `canonicalize` package (RFC 8785): the same text for any JSON
 * value, and the same refusals for what has no canonical text.
 */
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/domain/canonicalJson.ts';

const text = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', '"', '\\', '\u0000', '\u2028', 'é', 'e\u0301', '😀', '\u{10ffff}', '__proto__'),
);
const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(-0));
const value = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    number,
    text,
    fc.date({ noInvalidDate: true }),
    fc.array(tie('json'), { maxLength: 5 }),
    fc.dictionary(text, tie('json'), { maxKeys: 6 }),
  ),
})).json;

describe('canonicalJson', () => {
  it('writes, text for text, what the canonicalize package writes', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(canonicalize(v));
      }),
      { numRuns: 3000 },
    );
  });

  it('orders the keys of small and large objects alike (they are sorted two ways)', () => {
    fc.assert(
      fc.property(fc.dictionary(text, fc.integer(), { minKeys: 0, maxKeys: 40 }), (v) => {
        expect(canonicalJson(v)).toBe(canonicalize(v));
      }),
      { numRuns: 500 },
    );
  });

  it('leaves out undefined members and writes undefined elements as null, as the package does', () => {
    const v = { b: undefined, a: [undefined, 1], c: { toJSON: () => 'x' } };
    expect(canonicalJson(v)).toBe(canonicalize(v));
    expect(canonicalJson(v)).toBe('{"a":[null,1],"c":"x"}');
  });

  it('refuses what has no canonical text, as the package does', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, '\ud800', { '\udc00': 1 }, ['a\ud800b'], 1n]) {
      expect(() => canonicalize(bad)).toThrow();
      expect(() => canonicalJson(bad)).toThrow(TypeError);
    }
  });
});
