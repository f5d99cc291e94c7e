/**
 * Rail amount bounds: docs/DECISIONS.md's table is RAIL_AMOUNT_BOUNDS_MINOR, and a transfer outside them
 * is refused with a detail that states them.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Currency, SINGLE_AMOUNT_MAJOR_MAX, SINGLE_AMOUNT_MINOR_CEILING } from '../src/domain/money.ts';
import {
  formatAmountForReading,
  RAIL_AMOUNT_BOUNDS_MINOR,
  RAILS,
  railBounds,
  railBoundsSentence,
} from '../src/domain/transfers.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { fundedWallet } from './support/ledger.ts';

const page = readFileSync(new URL('../docs/DECISIONS.md', import.meta.url), 'utf8');
const TABLE_ROW = /^ *\| `([a-z_]+)` +\| ([A-Z]+) +\| +([0-9,.]+) \| +([0-9,.]+) \|$/gm;

describe('rail amount bounds in docs/DECISIONS.md', () => {
  it('lists every rail and currency with the bounds the code applies, in the same order', () => {
    const documented = [...page.matchAll(TABLE_ROW)].map(([, rail, currency, min, max]) => ({
      rail,
      currency,
      min,
      max,
    }));
    const applied = RAILS.flatMap((rail) =>
      Object.entries(RAIL_AMOUNT_BOUNDS_MINOR[rail]).map(([currency, bounds]) => ({
        rail,
        currency,
        min: formatAmountForReading(bounds.min, currency as Currency),
        max: formatAmountForReading(bounds.max, currency as Currency),
      })),
    );
    expect(applied.length).toBeGreaterThan(0);
    expect(documented).toEqual(applied);
  });

  it("states the internal rail's cap: the single-amount cap of each currency", () => {
    expect(railBounds('internal', 'KES')).toEqual({ min: 1n, max: SINGLE_AMOUNT_MAJOR_MAX * 100n });
    expect(railBounds('internal', 'USDC')).toEqual({ min: 1n, max: SINGLE_AMOUNT_MINOR_CEILING });
    expect(page).toMatch(/up to\s+the single-amount cap of the currency/);
    const ceiling = SINGLE_AMOUNT_MINOR_CEILING.toString();
    expect(ceiling).toMatch(/^10*$/);
    expect(page.match(/never\s+more than 10\^(\d+) minor units/)?.[1]).toBe(String(ceiling.length - 1));
    expect(page).toMatch(/one trillion major units/);
  });

  it('writes bounds with thousands separators at the currency exponent', () => {
    expect(railBoundsSentence('bank', 'KES', { min: 100_00n, max: 999_999_999_00n })).toBe(
      'KES bank payouts are 100.00 to 999,999,999.00',
    );
    expect(railBoundsSentence('mobile_money', 'UGX', { min: 500n, max: 5_000_000n })).toBe(
      'UGX mobile-money payouts are 500 to 5,000,000',
    );
    expect(formatAmountForReading(123_456_789n, 'USDC')).toBe('123.456789');
    expect(formatAmountForReading(100_000_000n, 'KES')).toBe('1,000,000.00');
    expect(formatAmountForReading(99_999n, 'UGX')).toBe('99,999');
    expect(formatAmountForReading(5n, 'KES')).toBe('0.05');
  });
});

describe.each(BACKENDS)('a transfer outside its rail bounds on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.close());

  it('is refused with out_of_range and a detail that states the bounds', async () => {
    const source = await fundedWallet(t, '1000.00');
    const response = await api(t, 'POST', '/v1/transfers', {
      body: {
        source,
        destination: { type: 'bank_account', bank_code: '01', account_number: '0123456789' },
        amount: '99.99',
        currency: 'KES',
      },
    });
    expect(response.statusCode).toBe(400);
    expect(response.data).toMatchObject({ code: 'validation_error', param: 'amount' });
    expect(response.data.errors).toEqual([
      expect.objectContaining({ param: 'amount', code: 'out_of_range' }),
    ]);
    expect(response.data.detail).toBe(
      "amount is outside the bank rail's bounds: KES bank payouts are 100.00 to 999,999,999.00",
    );
  });
});
