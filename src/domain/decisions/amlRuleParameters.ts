/**
 * An AML rule's parameters in their other forms: on the wire (snake_case, money as decimal strings at the
 * currency's exponent), parsed and checked from the wire, and as stored (JSON, money as minor-unit strings).
 */
import { validationError } from '../errors.ts';
import { requireWholeNumber } from '../json.ts';
import { type Currency, formatAmount, isCurrency, parseAmount } from '../money.ts';
import {
  AML_HISTORY_TRANSFERS_MAX,
  AML_WINDOW_SECONDS_MAX,
  type AmlRuleParameters,
  type AmlRuleType,
  BASIS_POINTS,
} from './aml.ts';

/** A rule's parameters on the wire: snake_case, money as decimal strings at the currency's exponent. */
export function presentAmlParameters(p: AmlRuleParameters): Record<string, string | number | null> {
  const money = (minor: bigint) => formatAmount(minor, p.currency);
  switch (p.type) {
    case 'single_transfer_threshold':
    case 'new_counterparty_high_value':
      return { currency: p.currency, amount: money(p.amountMinor) };
    case 'velocity':
      return {
        currency: p.currency,
        window_seconds: p.windowSeconds,
        count_max: p.countMax,
        amount_max: p.amountMaxMinor === null ? null : money(p.amountMaxMinor),
      };
    case 'structuring':
      return {
        currency: p.currency,
        threshold: money(p.thresholdMinor),
        margin_bp: p.marginBasisPoints,
        count_min: p.countMin,
        window_seconds: p.windowSeconds,
      };
    case 'rapid_movement':
      return {
        currency: p.currency,
        window_seconds: p.windowSeconds,
        share_bp: p.shareBasisPoints,
        amount_min: money(p.amountMinMinor),
      };
  }
}

/** The fields each type takes on the wire, all required unless listed as optional. */
export const AML_PARAMETER_FIELDS: Record<AmlRuleType, { required: string[]; optional: string[] }> = {
  single_transfer_threshold: { required: ['currency', 'amount'], optional: [] },
  new_counterparty_high_value: { required: ['currency', 'amount'], optional: [] },
  velocity: { required: ['currency', 'window_seconds'], optional: ['count_max', 'amount_max'] },
  structuring: {
    required: ['currency', 'threshold', 'margin_bp', 'count_min', 'window_seconds'],
    optional: [],
  },
  rapid_movement: { required: ['currency', 'window_seconds', 'share_bp', 'amount_min'], optional: [] },
};

/**
 * Parses and checks a rule's wire parameters for its type; throws a 400 naming `parameters.<field>`. Money
 * must be positive at the currency's exponent, windows 1 s to AML_WINDOW_SECONDS_MAX, counts 1 to
 * AML_HISTORY_TRANSFERS_MAX (kept as published: counting itself is not bounded), basis points 1 to 10,000.
 */
export function parseAmlParameters(type: AmlRuleType, raw: Record<string, unknown>): AmlRuleParameters {
  checkParameterNames(type, raw);
  const currency = parameterCurrency(raw);
  const money = (key: string): bigint => moneyParameter(raw, key, currency);
  const integer = (key: string, min: number, max: number): number => integerParameter(raw, key, min, max);
  const window = () => integer('window_seconds', 1, AML_WINDOW_SECONDS_MAX);
  switch (type) {
    case 'single_transfer_threshold':
    case 'new_counterparty_high_value':
      return { type, currency, amountMinor: money('amount') };
    case 'velocity': {
      const countMax =
        raw.count_max === undefined || raw.count_max === null
          ? null
          : integer('count_max', 1, AML_HISTORY_TRANSFERS_MAX);
      const amountMaxMinor =
        raw.amount_max === undefined || raw.amount_max === null ? null : money('amount_max');
      if (countMax === null && amountMaxMinor === null) {
        throw validationError(
          'parameters.count_max',
          'a velocity rule needs parameters.count_max, parameters.amount_max or both',
          'missing',
        );
      }
      return { type, currency, windowSeconds: window(), countMax, amountMaxMinor };
    }
    case 'structuring':
      return {
        type,
        currency,
        thresholdMinor: money('threshold'),
        marginBasisPoints: integer('margin_bp', 1, BASIS_POINTS),
        countMin: integer('count_min', 1, AML_HISTORY_TRANSFERS_MAX),
        windowSeconds: window(),
      };
    case 'rapid_movement':
      return {
        type,
        currency,
        windowSeconds: window(),
        shareBasisPoints: integer('share_bp', 1, BASIS_POINTS),
        amountMinMinor: money('amount_min'),
      };
  }
}

/** No field the type does not take, and every field it requires: unknown fields are named first. */
function checkParameterNames(type: AmlRuleType, raw: Record<string, unknown>): void {
  const fields = AML_PARAMETER_FIELDS[type];
  for (const key of Object.keys(raw)) {
    if (!fields.required.includes(key) && !fields.optional.includes(key)) {
      throw validationError(
        `parameters.${key}`,
        `parameters.${key} is not a parameter of a ${type} rule`,
        'unknown_field',
      );
    }
  }
  for (const key of fields.required) {
    if (raw[key] === undefined || raw[key] === null) {
      throw validationError(
        `parameters.${key}`,
        `parameters.${key} is required for a ${type} rule`,
        'missing',
      );
    }
  }
}

function parameterCurrency(raw: Record<string, unknown>): Currency {
  const currency = raw.currency;
  if (typeof currency !== 'string' || !isCurrency(currency)) {
    throw validationError(
      'parameters.currency',
      'parameters.currency must be a supported currency code',
      'invalid_value',
    );
  }
  return currency;
}

function moneyParameter(raw: Record<string, unknown>, key: string, currency: Currency): bigint {
  const value = raw[key];
  if (typeof value !== 'string') {
    throw validationError(`parameters.${key}`, `parameters.${key} must be a decimal string`, 'invalid_type');
  }
  return parseAmount(value, currency, `parameters.${key}`);
}

function integerParameter(raw: Record<string, unknown>, key: string, min: number, max: number): number {
  return requireWholeNumber(raw[key], `parameters.${key}`, min, max);
}

/** Parameters as stored (JSON, money as strings of minor units) and back. */
export function storedAmlParameters(p: AmlRuleParameters): Record<string, string | number | null> {
  const out: Record<string, string | number | null> = {};
  for (const [key, value] of Object.entries(p))
    out[key] = typeof value === 'bigint' ? value.toString() : value;
  return out;
}

const MONEY_KEYS = new Set(['amountMinor', 'amountMaxMinor', 'thresholdMinor', 'amountMinMinor']);

export function amlParametersFromStored(stored: Record<string, unknown>): AmlRuleParameters {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stored)) {
    out[key] = MONEY_KEYS.has(key) && value !== null ? BigInt(value as string) : value;
  }
  return out as unknown as AmlRuleParameters;
}
