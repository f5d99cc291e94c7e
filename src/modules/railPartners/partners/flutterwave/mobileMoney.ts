/**
 * Mobile-money payouts through Flutterwave's Transfers API: the same POST /v3/transfers as a bank payout,
 * with the operator's code as `account_bank` and the phone number (country code first, no `+`) as
 * `account_number`, per Flutterwave's Mobile Money Transfer page (docs/rails/flutterwave.md). Pure.
 */
import type { Currency } from '../../../../domain/money.ts';
import type { MobileNetwork } from '../../../../domain/transfers.ts';
import type { FlutterwaveConfig } from './connection.ts';

/**
 * Flutterwave's `account_bank` for a network's wallets in a currency, as its Mobile Money Transfer page
 * lists them. A pair not listed is not sent (the payout fails `destination_not_supported`).
 */
export const FLUTTERWAVE_MOBILE_MONEY_CODES: Readonly<
  Record<MobileNetwork, Partial<Record<Currency, string>>>
> = {
  mpesa: { KES: 'MPS' },
  mtn: { GHS: 'MTN', UGX: 'MTN', RWF: 'MTN' },
  airtel: { UGX: 'AIRTEL', TZS: 'AIRTEL' },
  tigo: { TZS: 'TIGO' },
  vodacom: { TZS: 'VODACOM' },
};

/** The operator codes whose transfers need the sender in `meta` (M-Pesa Kenya). */
const SENDER_REQUIRED: ReadonlySet<string> = new Set(['MPS:KES']);

export interface MobileMoneyTransferFields {
  account_bank: string;
  account_number: string;
  beneficiary_name: string;
  meta?: { sender: string; sender_country: string; mobile_number: string };
}

/** The transfer's mobile-money fields, or why the payout cannot go (nothing is sent then). */
export function mobileMoneyFields(
  config: FlutterwaveConfig,
  destination: { network: MobileNetwork; phone: string; name?: string | undefined },
  currency: Currency,
): MobileMoneyTransferFields | { unsupported: string } {
  const code = FLUTTERWAVE_MOBILE_MONEY_CODES[destination.network]?.[currency];
  if (code === undefined) {
    return { unsupported: `Flutterwave carries no ${destination.network} transfers in ${currency}` };
  }
  const name = destination.name?.trim();
  if (!name) return { unsupported: 'Flutterwave needs the beneficiary name of a mobile-money transfer' };
  const fields: MobileMoneyTransferFields = {
    account_bank: code,
    account_number: destination.phone.replace(/^\+/, ''),
    beneficiary_name: name,
  };
  if (!SENDER_REQUIRED.has(`${code}:${currency}`)) return fields;
  if (config.sender === undefined) {
    return { unsupported: 'an M-Pesa Kenya transfer needs the sender settings (sender_name, …)' };
  }
  return {
    ...fields,
    meta: {
      sender: config.sender.name,
      sender_country: config.sender.country,
      mobile_number: config.sender.mobileNumber,
    },
  };
}
