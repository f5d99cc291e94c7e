import { describe, expect, it } from 'vitest';
import { monotonicIdGenerator } from '../src/app/deps.ts';
import { formatApiKey, grantsScope, parseApiKey } from '../src/domain/apiKeys.ts';
import { AppError } from '../src/domain/errors.ts';
import { canonicalJson, requestFingerprint } from '../src/domain/idempotency.ts';
import { formatId, idPattern, isId } from '../src/domain/ids.ts';
import { formatAmount, parseAmount } from '../src/domain/money.ts';

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
});
