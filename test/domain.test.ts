import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monotonicIdGenerator } from '../src/app/deps.ts';
import { grantsScope } from '../src/domain/access.ts';
import { formatApiKey, parseApiKey } from '../src/domain/apiKeys.ts';
import { csvRecords } from '../src/domain/csv.ts';
import { AppError } from '../src/domain/errors.ts';
import { canonicalJson, requestFingerprint } from '../src/domain/idempotency.ts';
import { base32OfRandom, formatId, idPattern, isId } from '../src/domain/ids.ts';
import { canonicalNumberText, numberSourceOf, recordNumberSource } from '../src/domain/jsonNumbers.ts';
import { CURRENCY_EXPONENTS, type Currency, formatAmount, parseAmount } from '../src/domain/money.ts';
import { rfc4180Records } from './support/csv.ts';

/** An exponent with its sign always written: +3, -3. */
function signed(exponent: number): string {
  return exponent < 0 ? String(exponent) : `+${exponent}`;
}

function outcome(fn: () => bigint): bigint | string | undefined {
  try {
    return fn();
  } catch (error) {
    if (error instanceof AppError) return error.errors[0]?.code;
    throw error;
  }
}

function failureCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error.errors[0]?.code;
    throw error;
  }
  return undefined;
}

describe('money', () => {
  it('parses decimal strings into minor units at the currency exponent', () => {
    expect(parseAmount('1500.00', 'KES')).toBe(150000n);
    expect(parseAmount('1500', 'KES')).toBe(150000n);
    expect(parseAmount('0.1', 'KES')).toBe(10n);
    expect(parseAmount('1500', 'UGX')).toBe(1500n);
    expect(parseAmount('1.000001', 'USDC')).toBe(1000001n);
    expect(parseAmount('12.50', 'KES')).toBe(1250n);
    expect(parseAmount('1.10', 'KES')).toBe(110n);
    expect(parseAmount('9223372036854775807', 'UGX')).toBe(9223372036854775807n);
  });

  it('accepts a JSON number only when it is exact at the exponent', () => {
    expect(parseAmount(12.5, 'KES')).toBe(1250n);
    expect(parseAmount(0.1, 'KES')).toBe(10n);
    expect(parseAmount(100, 'UGX')).toBe(100n);
    expect(failureCode(() => parseAmount(0.105, 'KES'))).toBe('too_precise');
    expect(failureCode(() => parseAmount(1e21, 'KES'))).toBe('out_of_range');
    expect(failureCode(() => parseAmount(Number.NaN, 'KES'))).toBe('invalid');
  });

  it('reads a JSON number from its source text, exponents included, by the rules for strings', () => {
    const read = (text: string, currency: Currency = 'KES') =>
      parseAmount(Number(text), currency, 'amount', text);
    expect(read('12345678901234567', 'UGX')).toBe(12345678901234567n);
    expect(read('1.5e3')).toBe(150000n);
    expect(read('1250E-2')).toBe(1250n);
    expect(read('12.50')).toBe(1250n);
    expect(read('0e5')).toBe(0n);
    expect(read('92233720368547758.07')).toBe(9223372036854775807n);
    expect(read('9.223372036854775807E18', 'UGX')).toBe(9223372036854775807n);
    for (const [text, code] of [
      ['0.0000001', 'too_precise'],
      ['1E-7', 'too_precise'],
      ['1e-400', 'too_precise'],
      ['1e-99999999999999999999', 'too_precise'],
      ['1e400', 'out_of_range'],
      ['1e99999999999999999999', 'out_of_range'],
      ['9.223372036854775808e18', 'out_of_range'],
      ['-1.5', 'not_positive'],
      ['-0', 'not_positive'],
    ] as const) {
      expect(
        failureCode(() => read(text)),
        text,
      ).toBe(code);
    }
    // Without its source text a number is read from its shortest form: 1e-7 is over-precise, not huge.
    expect(failureCode(() => parseAmount(1e-7, 'KES'))).toBe('too_precise');
  });

  it('reads every spelling of an amount as a JSON number the way it reads the decimal string', () => {
    const currencies = Object.keys(CURRENCY_EXPONENTS) as Currency[];
    fc.assert(
      fc.property(
        fc.oneof(fc.bigInt({ min: 0n, max: 1000n }), fc.bigInt({ min: 0n, max: 10n ** 24n })),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: -30, max: 30 }),
        fc.constantFrom(...currencies),
        (mantissa, decimals, shift, currency) => {
          const digits = mantissa.toString().padStart(decimals + 1, '0');
          const plain = decimals ? `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` : digits;
          // The same value with the point moved `shift` places and an exponent to compensate.
          const m = mantissa.toString();
          const exponentForm =
            shift >= 0
              ? `${m}${'0'.repeat(shift)}e${-decimals - shift}`
              : `0.${'0'.repeat(-shift)}${m}E${signed(-decimals - shift + m.length)}`;
          const asString = outcome(() => parseAmount(plain, currency));
          expect(outcome(() => parseAmount(Number(exponentForm), currency, 'amount', exponentForm))).toEqual(
            asString,
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses negative, over-precise, malformed and out-of-range amounts', () => {
    expect(failureCode(() => parseAmount('-1', 'KES'))).toBe('not_positive');
    expect(failureCode(() => parseAmount('1.001', 'KES'))).toBe('too_precise');
    expect(failureCode(() => parseAmount('1.5', 'UGX'))).toBe('too_precise');
    expect(failureCode(() => parseAmount('1,000', 'KES'))).toBe('invalid_format');
    expect(failureCode(() => parseAmount('1e3', 'KES'))).toBe('invalid_format');
    expect(failureCode(() => parseAmount(' 1', 'KES'))).toBe('invalid_format');
    expect(failureCode(() => parseAmount('.5', 'KES'))).toBe('invalid_format');
    expect(failureCode(() => parseAmount('9223372036854775808', 'UGX'))).toBe('out_of_range');
    expect(failureCode(() => parseAmount(true, 'KES'))).toBe('invalid_type');
  });

  it('formats minor units with the exact number of decimals', () => {
    expect(formatAmount(150000n, 'KES')).toBe('1500.00');
    expect(formatAmount(5n, 'KES')).toBe('0.05');
    expect(formatAmount(0n, 'UGX')).toBe('0');
    expect(formatAmount(1n, 'USDT')).toBe('0.000001');
    expect(formatAmount(-250n, 'USD')).toBe('-2.50');
  });

  it('round-trips every formatted amount', () => {
    for (const minor of [0n, 1n, 99n, 100n, 123456789n, 9223372036854775807n]) {
      for (const currency of ['KES', 'UGX', 'USDC'] as const) {
        expect(parseAmount(formatAmount(minor, currency), currency)).toBe(minor);
      }
    }
  });
});

describe('ids', () => {
  it('are prefixed, URL-safe and sort by creation time', () => {
    const random = new Uint8Array(10);
    const early = formatId('wallet', 1_700_000_000_000, random);
    const late = formatId('wallet', 1_700_000_000_001, random);
    expect(early < late).toBe(true);
    expect(isId('wallet', early)).toBe(true);
    expect(isId('cus', early)).toBe(false);
    expect(new RegExp(idPattern('tr')).test('tr_01h')).toBe(false);
  });

  it("write their random part as the big-endian number of its bytes, in base 32's lowest digits", () => {
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    const reference = (random: Uint8Array, bytes: number, chars: number) => {
      let bits = 0n;
      for (const byte of random.subarray(0, bytes)) bits = (bits << 8n) | BigInt(byte);
      let out = '';
      for (let i = 0; i < chars; i++) {
        out = alphabet.charAt(Number(bits & 31n)) + out;
        bits >>= 5n;
      }
      return out;
    };
    const shapes = [
      [10, 16],
      [13, 20],
      [1, 1],
      [1, 4],
      [4, 3],
    ] as const;
    for (const random of [
      new Uint8Array(13),
      new Uint8Array(13).fill(255),
      ...Array.from({ length: 200 }, () => randomBytes(13)),
    ]) {
      for (const [bytes, chars] of shapes) {
        expect(base32OfRandom(random, bytes, chars)).toBe(reference(random, bytes, chars));
      }
    }
  });

  it('stay in creation order within one millisecond', () => {
    const next = monotonicIdGenerator(() => 1_700_000_000_000);
    const ids = Array.from({ length: 1000 }, () => next('transfer'));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('api keys', () => {
  it('carry their environment in the prefix', () => {
    const key = formatApiKey('sandbox', new Uint8Array(64).fill(7));
    expect(key).toMatch(/^sk_sandbox_[A-Za-z0-9]{32}$/);
    expect(parseApiKey(key)).toEqual({ ok: true, environment: 'sandbox' });
    expect(parseApiKey(`sk_live_${'a'.repeat(32)}`)).toEqual({ ok: true, environment: 'production' });
    expect(parseApiKey('sk_test_abc').ok).toBe(false);
  });

  it('write implies read, not the other way round', () => {
    expect(grantsScope(['write'], 'read')).toBe(true);
    expect(grantsScope(['read'], 'write')).toBe(false);
  });
});

describe('request fingerprints', () => {
  it('ignore key order but not values, method or path', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
    const base = requestFingerprint('POST', '/v1/wallets', { a: 1, b: 2 });
    expect(requestFingerprint('POST', '/v1/wallets', { b: 2, a: 1 })).toBe(base);
    expect(requestFingerprint('POST', '/v1/wallets', { a: 1, b: 3 })).not.toBe(base);
    expect(requestFingerprint('POST', '/v1/customers', { a: 1, b: 2 })).not.toBe(base);
  });

  it('write a parsed number from its source text: one spelling per value, never rounded', () => {
    const parsed = (text: string) => {
      const body = { amount: Number(text), items: [Number(text)] };
      recordNumberSource(body, 'amount', text);
      recordNumberSource(body.items, '0', text);
      return body;
    };
    expect(canonicalJson(parsed('12345678901234567'))).toBe(
      '{"amount":12345678901234567e0,"items":[12345678901234567e0]}',
    );
    const fingerprint = (text: string) => requestFingerprint('POST', '/v1/transfers', parsed(text));
    expect(fingerprint('12345678901234567')).not.toBe(fingerprint('12345678901234568'));
    expect(fingerprint('12345678901234567')).toBe(fingerprint('12345678901234567.0'));
    expect(fingerprint('1.50')).toBe(fingerprint('1.5'));
    expect(fingerprint('15e-1')).toBe(
      requestFingerprint('POST', '/v1/transfers', { amount: 1.5, items: [1.5] }),
    );
    expect(fingerprint('1.5')).not.toBe(fingerprint('1.51'));
  });

  it('spell numbers canonically', () => {
    for (const [text, canonical] of [
      ['1.50', '1.5'],
      ['0.15E1', '1.5'],
      ['1.5e3', '1500'],
      ['-0', '0'],
      ['0.000e7', '0'],
      ['0.1', '0.1'],
      ['1e21', '1e+21'],
      ['12345678901234568', '12345678901234568'],
      ['12345678901234567', '12345678901234567e0'],
      ['1234567890123456.70', '12345678901234567e-1'],
      ['10e399', '1e400'],
      ['-1e-400', '-1e-400'],
      ['1e0000000000000000000001', '10'],
      ['1.0e1234567890123456', '1.0e1234567890123456'],
    ] as const) {
      expect(canonicalNumberText(text), text).toBe(canonical);
    }
  });

  it('keep the fingerprints of numbers a double holds exactly unchanged', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(canonicalNumberText(String(value))).toBe(JSON.stringify(value));
      }),
    );
  });

  it('forget a source text once the number is replaced', () => {
    const body: Record<string, unknown> = { amount: 12345678901234568 };
    recordNumberSource(body, 'amount', '12345678901234567');
    expect(numberSourceOf(body, 'amount')).toBe('12345678901234567');
    body.amount = 5;
    expect(numberSourceOf(body, 'amount')).toBeUndefined();
    expect(numberSourceOf({ amount: 1 }, 'amount')).toBeUndefined();
  });
});

describe('CSV as the service writes it', () => {
  it('ends every record in CRLF and quotes commas, quotes and every line break, RFC 4180', () => {
    const text = csvRecords([
      ['id', 'note'],
      ['a', 'plain'],
      ['b', 'one, "two"'],
      ['c', 'line\r\nbreak'],
      ['d', 'lone\nfeed'],
      ['e', 'lone\rreturn'],
      ['f', null],
    ]);
    expect(text).toBe(
      'id,note\r\na,plain\r\nb,"one, ""two"""\r\nc,"line\r\nbreak"\r\nd,"lone\nfeed"\r\ne,"lone\rreturn"\r\nf,\r\n',
    );
  });

  it('reads back, strictly, as the records written, whatever the cells hold', () => {
    const cell = fc.string({ unit: fc.constantFrom('a', ',', '"', '\r', '\n', ' ', 'é', '=') });
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 1, maxLength: 4 }), { minLength: 1 }), (rows) => {
        // Cells a spreadsheet would run (`=` first) come back prefixed with a quote.
        const expected = rows.map((r) => r.map((c) => (/^[=\r]/.test(c) ? `'${c}` : c)));
        expect(rfc4180Records(csvRecords(rows))).toEqual(expected);
      }),
    );
  });
});
