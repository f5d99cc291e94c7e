/**
 * The simulator's mobile-money transfers: POST /v3/transfers with a mobile-money operator's code as
 * `account_bank` and the wallet's number (country code first) as `account_number`, per Flutterwave's Mobile
 * Money Transfer page: the operators it lists per currency, `beneficiary_name` required, and an M-Pesa Kenya
 * transfer's sender in `meta`. The wallet number's last four digits decide the outcome (magic numbers).
 */
import type { FlutterwaveAccountBehaviour } from './accounts.ts';

/** The operator codes Flutterwave lists per currency for mobile-money transfers (docs/rails/flutterwave.md). */
export const FLUTTERWAVE_MOBILE_MONEY_OPERATORS: Readonly<Record<string, readonly string[]>> = {
  KES: ['MPS'],
  GHS: ['AIRTELTIGO', 'MTN', 'VODAFONE'],
  UGX: ['AIRTEL', 'MTN'],
  RWF: ['MPS', 'MTN'],
  TZS: ['AIRTEL', 'HALOPESA', 'TIGO', 'VODACOM'],
  ZMW: ['MPS'],
};

/** Every mobile-money operator code: an `account_bank` that names one is a mobile-money transfer. */
const OPERATOR_CODES: ReadonlySet<string> = new Set(Object.values(FLUTTERWAVE_MOBILE_MONEY_OPERATORS).flat());

/** The `meta` fields Flutterwave requires on an M-Pesa Kenya transfer. */
const KENYA_SENDER_FIELDS = ['sender', 'sender_country', 'mobile_number'] as const;

/** A wallet number: the country code and the subscriber's number, digits only. */
const WALLET_NUMBER_PATTERN = /^\d{10,15}$/;

/** The magic wallet numbers' endings (any operator): the rest succeed. */
export const FLUTTERWAVE_SIMULATOR_WALLET_ENDINGS = {
  fails: '0041',
  staysPending: '0042',
} as const;

export const isMobileMoneyOperator = (code: string) => OPERATOR_CODES.has(code);

/** Why Flutterwave refuses a mobile-money transfer's fields (a 400 message), or undefined when it takes them. */
export function mobileMoneyRefusal(
  fields: Record<string, unknown>,
  operator: string,
  currency: string,
  walletNumber: string,
): string | undefined {
  if (!(FLUTTERWAVE_MOBILE_MONEY_OPERATORS[currency] ?? []).includes(operator)) {
    return `${operator} is not a mobile money option for ${currency}`;
  }
  if (!WALLET_NUMBER_PATTERN.test(walletNumber)) {
    return 'account_number must be the mobile number with its country code';
  }
  const name = fields.beneficiary_name;
  if (typeof name !== 'string' || name.trim() === '') return 'beneficiary_name is required';
  if (operator !== 'MPS' || currency !== 'KES') return undefined;
  const meta = typeof fields.meta === 'object' && fields.meta !== null ? fields.meta : {};
  const missing = KENYA_SENDER_FIELDS.find((field) => {
    const value = (meta as Record<string, unknown>)[field];
    return typeof value !== 'string' || value.trim() === '';
  });
  return missing === undefined ? undefined : `meta.${missing} is required for M-Pesa Kenya transfers`;
}

/** How a transfer to a wallet ends, by the number's last four digits. */
export function walletBehaviour(walletNumber: string): FlutterwaveAccountBehaviour {
  if (walletNumber.endsWith(FLUTTERWAVE_SIMULATOR_WALLET_ENDINGS.fails)) {
    return { kind: 'fail', completeMessage: 'DISBURSE FAILED: Mobile money wallet is not registered' };
  }
  if (walletNumber.endsWith(FLUTTERWAVE_SIMULATOR_WALLET_ENDINGS.staysPending)) {
    return { kind: 'stay_pending' };
  }
  return { kind: 'succeed' };
}
