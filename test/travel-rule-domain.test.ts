/**
 * The pure Travel Rule decision and data check, and digital-asset addresses per network family: exact
 * conversion at the boundary (where floating point would be wrong), per-country thresholds, every missing
 * or malformed field named.
 */
import { describe, expect, it } from 'vitest';
import {
  checkTravelRuleData,
  decideTravelRule,
  defaultTravelRuleSettings,
  parseTravelRuleSettings,
  presentTravelRuleSettings,
  type TravelRuleSettings,
} from '../src/domain/decisions/travelRule.ts';
import { addressMatchesNetwork, cryptoAddressDestination } from '../src/domain/digitalAssets.ts';
import { AppError } from '../src/domain/errors.ts';
import { parseRate } from '../src/domain/rates.ts';
import { simulatedTransactionHash } from '../src/rails/sandbox.ts';

const TODAY = new Date('2026-11-24T12:00:00Z');

function settings(thresholds: Record<string, string>, rates: Record<string, string>): TravelRuleSettings {
  return parseTravelRuleSettings({ thresholds, rates }, ['USDC', 'USDT']);
}

describe('decideTravelRule', () => {
  const defaults = defaultTravelRuleSettings();

  it('requires the data from 1,000.00 USD by default: below, at and above', () => {
    const decide = (amountMinor: bigint) =>
      decideTravelRule({ amountMinor, currency: 'USDC', country: null }, defaults);
    expect(decide(999_999999n)).toEqual({
      required: false,
      jurisdiction: 'default',
      threshold: '1000.00',
      amountUsd: '999.999999',
      rate: '1',
    });
    expect(decide(1_000_000000n)).toMatchObject({ required: true, amountUsd: '1000.00' });
    expect(decide(1_000_000001n)).toMatchObject({ required: true, amountUsd: '1000.000001' });
  });

  it("uses the customer's country when it has a threshold of its own, else the default", () => {
    const s = settings({ default: '1000.00', KE: '500.00' }, { USDC: '1', USDT: '1' });
    expect(decideTravelRule({ amountMinor: 600_000000n, currency: 'USDC', country: 'KE' }, s)).toMatchObject({
      required: true,
      jurisdiction: 'KE',
      threshold: '500.00',
    });
    expect(decideTravelRule({ amountMinor: 600_000000n, currency: 'USDC', country: 'UG' }, s)).toMatchObject({
      required: false,
      jurisdiction: 'default',
      threshold: '1000.00',
    });
  });

  it('converts exactly where floating point is wrong', () => {
    // 100 × 0.57 is 56.99999999999999 in doubles.
    expect(100 * 0.57 >= 57).toBe(false);
    const s = settings({ default: '57.00' }, { USDC: '0.57', USDT: '1' });
    expect(decideTravelRule({ amountMinor: 100_000000n, currency: 'USDC', country: null }, s)).toMatchObject({
      required: true,
      amountUsd: '57.00',
    });
    expect(decideTravelRule({ amountMinor: 99_999999n, currency: 'USDC', country: null }, s)).toMatchObject({
      required: false,
      amountUsd: '56.99999943',
    });
    // 129,870.13 KES × 0.0077 = 1,000.000001 USD; one cent less is 999.999924.
    expect(
      decideTravelRule({ amountMinor: 12_987_013n, currency: 'KES', country: null }, defaults),
    ).toMatchObject({ required: true, amountUsd: '1000.000001' });
    expect(
      decideTravelRule({ amountMinor: 12_987_012n, currency: 'KES', country: null }, defaults),
    ).toMatchObject({ required: false, amountUsd: '999.999924' });
  });

  it('requires the data for a currency without a rate', () => {
    expect(decideTravelRule({ amountMinor: 1n, currency: 'XOF', country: null }, defaults)).toMatchObject({
      required: true,
      amountUsd: null,
      rate: null,
    });
  });
});

describe('rates and settings', () => {
  it('holds a rate as a scaled integer and writes it back without trailing zeros', () => {
    expect(parseRate('0.0077', 'r')).toEqual({ numerator: 77n, scale: 4 });
    expect(parseRate('1.50', 'r')).toEqual({ numerator: 15n, scale: 1 });
    for (const bad of ['0', '0.000', '-1', '1e3', '.5', '1.1234567890123', '1234567890']) {
      expect(() => parseRate(bad, 'rates.KES'), bad).toThrow(AppError);
    }
  });

  it('refuses settings without a default threshold, with a bad jurisdiction, or without a stablecoin rate', () => {
    const paramOf = (thresholds: Record<string, string>, rates: Record<string, string>) => {
      try {
        settings(thresholds, rates);
      } catch (error) {
        return (error as AppError).param;
      }
      return undefined;
    };
    expect(paramOf({ KE: '1.00' }, { USDC: '1', USDT: '1' })).toBe('thresholds.default');
    expect(paramOf({ default: '1.00', Kenya: '1.00' }, { USDC: '1', USDT: '1' })).toBe('thresholds.Kenya');
    expect(paramOf({ default: '0' }, { USDC: '1', USDT: '1' })).toBe('thresholds.default');
    expect(paramOf({ default: '1.00' }, { USDC: '1' })).toBe('rates.USDT');
    expect(paramOf({ default: '1.00' }, { USDC: '1', USDT: '1', BTC: '1' })).toBe('rates.BTC');
  });

  it('presents the defaults: 1,000.00 USD and named rates', () => {
    expect(presentTravelRuleSettings(defaultTravelRuleSettings())).toMatchObject({
      thresholds: { default: '1000.00' },
      rates: { USDC: '1', USDT: '1', KES: '0.0077' },
    });
  });
});

describe('checkTravelRuleData', () => {
  const context = { destinationAddress: '0xabc', today: TODAY };
  const params = (input: Parameters<typeof checkTravelRuleData>[0]) =>
    checkTravelRuleData(input, context).errors.map((e) => `${e.param}:${e.code}`);

  it('names every missing field when nothing is given', () => {
    expect(params(undefined)).toEqual([
      'travel_rule.originator.name:missing',
      'travel_rule.originator.account:missing',
      'travel_rule.originator:missing',
      'travel_rule.beneficiary.name:missing',
    ]);
  });

  it('names malformed dates of birth, national ids and over-long fields', () => {
    const base = { originator: { name: 'A', account: 'B' }, beneficiary: { name: 'C' } };
    const withOriginator = (extra: Record<string, string>) => ({
      ...base,
      originator: { ...base.originator, ...extra },
    });
    expect(params(withOriginator({ date_of_birth: '1990-02-30' }))).toEqual([
      'travel_rule.originator.date_of_birth:invalid_format',
    ]);
    expect(params(withOriginator({ date_of_birth: '2030-01-01' }))).toEqual([
      'travel_rule.originator.date_of_birth:out_of_range',
    ]);
    expect(params(withOriginator({ national_id: 'ab' }))).toEqual([
      'travel_rule.originator.national_id:invalid_format',
    ]);
    expect(
      params({ ...withOriginator({ address: 'Nairobi' }), beneficiary: { name: 'x'.repeat(201) } }),
    ).toEqual(['travel_rule.beneficiary.name:too_long']);
  });

  it('completes the data: trimmed, the beneficiary account defaulting to the destination address', () => {
    const checked = checkTravelRuleData(
      {
        originator: { name: ' Amina ', account: 'A-1', national_id: 'ID-1234' },
        beneficiary: { name: 'Juma' },
      },
      context,
    );
    expect(checked).toEqual({
      errors: [],
      data: {
        originator: {
          name: 'Amina',
          account: 'A-1',
          address: null,
          national_id: 'ID-1234',
          date_of_birth: null,
        },
        beneficiary: { name: 'Juma', account: '0xabc', institution: null },
      },
    });
  });
});

describe('digital-asset addresses', () => {
  it('checks an address by its network family', () => {
    expect(addressMatchesNetwork('0x52908400098527886e0f7030069857d2e4169ee7', 'polygon')).toBe(true);
    expect(addressMatchesNetwork('0x52908400098527886e0f7030069857d2e4169ee', 'ethereum')).toBe(false);
    expect(addressMatchesNetwork('7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV', 'solana')).toBe(true);
    expect(addressMatchesNetwork(`0OIl${'1'.repeat(30)}`, 'solana')).toBe(false);
    expect(addressMatchesNetwork('TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', 'tron')).toBe(true);
    expect(addressMatchesNetwork('AJRabPrwbZy45sbavfcjinPJC18kjpRTv8', 'tron')).toBe(false);
  });

  it('refuses an unknown asset or network, naming the field', () => {
    const paramOf = (asset: string, network: string, address: string) => {
      try {
        cryptoAddressDestination(asset, network, address);
      } catch (error) {
        return (error as AppError).param;
      }
      return undefined;
    };
    expect(paramOf('DAI', 'ethereum', '0x0')).toBe('destination.asset');
    expect(paramOf('USDC', 'bitcoin', '0x0')).toBe('destination.network');
    expect(paramOf('USDC', 'tron', '0x52908400098527886e0f7030069857d2e4169ee7')).toBe('destination.address');
  });

  it('names a simulated transaction by a hash of the transfer id', () => {
    const hash = simulatedTransactionHash('tr_01jcz3m5e7x8y9a0b1c2d3e4f5');
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(simulatedTransactionHash('tr_01jcz3m5e7x8y9a0b1c2d3e4f5')).toBe(hash);
  });
});
