/** MKOBA_PILOT_TRANSFERS_PER_DAY_MAX and MKOBA_PILOT_AMOUNT_PER_DAY_MAX: the caps a pilot runs under. */
import type { Environment } from '../domain/access.ts';
import type { PilotCaps } from '../domain/decisions/pilotCaps.ts';
import { type Currency, isCurrency, parseAmount } from '../domain/money.ts';
import { ConfigError, nonEmpty } from './variables.ts';

/**
 * Pilot volume caps (MKOBA_ENV=pilot), per organization, per currency, per UTC day: how many transfers it
 * may create, and how much it may send. The amount caps are in major units of each currency; a currency
 * without one carries nothing in a pilot (set it to open that currency).
 */
export const PILOT_TRANSFERS_PER_DAY_MAX_DEFAULT = 500;
/** The largest MKOBA_PILOT_TRANSFERS_PER_DAY_MAX: a pilot is a bounded launch, not a throughput test. */
export const PILOT_TRANSFERS_PER_DAY_MAX_LIMIT = 1_000_000;
export const PILOT_AMOUNT_PER_DAY_MAX_DEFAULT: Partial<Record<Currency, string>> = {
  KES: '1000000.00',
  UGX: '30000000',
  TZS: '20000000.00',
  RWF: '10000000',
  USD: '10000.00',
  USDC: '10000.000000',
  USDT: '10000.000000',
};

function pilotAmountCaps(text: string | undefined): Partial<Record<Currency, bigint>> {
  const caps: Partial<Record<Currency, bigint>> = {};
  for (const [currency, amount] of Object.entries(PILOT_AMOUNT_PER_DAY_MAX_DEFAULT)) {
    caps[currency as Currency] = parseAmount(amount, currency as Currency);
  }
  for (const part of text === undefined ? [] : text.split(',')) {
    const match = /^([A-Z]{3,4}):(\d+(?:\.\d+)?)$/.exec(part.trim());
    const currency = match?.[1];
    if (!match || !currency || !isCurrency(currency)) {
      throw new ConfigError(
        'MKOBA_PILOT_AMOUNT_PER_DAY_MAX',
        `must be CURRENCY:AMOUNT pairs in major units, comma-separated, such as 'KES:500000.00,UGX:15000000'; got '${part.trim()}'`,
      );
    }
    try {
      caps[currency] = parseAmount(match[2], currency);
    } catch {
      throw new ConfigError(
        'MKOBA_PILOT_AMOUNT_PER_DAY_MAX',
        `the ${currency} cap '${match[2]}' must be a decimal with at most the currency's decimals`,
      );
    }
  }
  return caps;
}

export function loadPilotCaps(env: NodeJS.ProcessEnv, environment: Environment): PilotCaps | undefined {
  const countText = nonEmpty(env.MKOBA_PILOT_TRANSFERS_PER_DAY_MAX);
  const amountText = nonEmpty(env.MKOBA_PILOT_AMOUNT_PER_DAY_MAX);
  if (environment !== 'pilot') {
    const set =
      countText !== undefined
        ? 'MKOBA_PILOT_TRANSFERS_PER_DAY_MAX'
        : amountText !== undefined
          ? 'MKOBA_PILOT_AMOUNT_PER_DAY_MAX'
          : undefined;
    if (set) throw new ConfigError(set, `applies only when MKOBA_ENV=pilot (this is ${environment})`);
    return undefined;
  }
  let transfersPerDayMax = PILOT_TRANSFERS_PER_DAY_MAX_DEFAULT;
  if (countText !== undefined) {
    const n = /^\d{1,7}$/.test(countText) ? Number(countText) : Number.NaN;
    if (!(n >= 0 && n <= PILOT_TRANSFERS_PER_DAY_MAX_LIMIT)) {
      throw new ConfigError(
        'MKOBA_PILOT_TRANSFERS_PER_DAY_MAX',
        `must be whole transfers per organization per currency per UTC day, from 0 to ${PILOT_TRANSFERS_PER_DAY_MAX_LIMIT}; got '${countText}'`,
      );
    }
    transfersPerDayMax = n;
  }
  return { transfersPerDayMax, amountPerDayMaxMinor: pilotAmountCaps(amountText) };
}
