/**
 * A transfer request's checks that need nothing but its wallets: the destination's forms read field by
 * field, then currency, rail, amount and the rail's bounds and step, and a wallet destination's existence and
 * currency. Shared by new transfers, quotes and payment batch items.
 */
import { PHONE_PATTERN } from '../../../domain/contactDetails.ts';
import type { TravelRuleInput } from '../../../domain/decisions/travelRule.ts';
import { cryptoAddressDestination } from '../../../domain/digitalAssets.ts';
import { resourceMissing, validationError } from '../../../domain/errors.ts';
import { isId } from '../../../domain/ids.ts';
import { requireOneOf } from '../../../domain/json.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import { type Currency, checkSingleAmount, parseAmount } from '../../../domain/money.ts';
import {
  checkRailAmountStep,
  DESTINATION_TYPES,
  type Destination,
  type DestinationType,
  MOBILE_NETWORKS,
  type MobileNetwork,
  phoneMatchesNetwork,
  RAIL_OF_DESTINATION,
  RAILS,
  type Rail,
  railBounds,
  railBoundsSentence,
} from '../../../domain/transfers.ts';
import {
  requirePayableDestination,
  requireSourceCurrency,
  type WalletIdentity,
} from '../../../domain/wallets.ts';

const PHONE = new RegExp(PHONE_PATTERN);
const ACCOUNT_TEXT_PATTERN = /^[A-Za-z0-9 -]{1,34}$/;

/** The request as the HTTP edge hands it over, after JSON Schema validation of shapes. */
export interface CreateTransferRequest {
  source: string;
  destination: string | (Record<string, string> & { type: string });
  amount: string | number;
  currency: string;
  rail?: string;
  metadata?: Metadata;
  /** Originator and beneficiary data for a digital-asset transfer (the Travel Rule). */
  travel_rule?: TravelRuleInput;
}

type DestinationObject = Exclude<CreateTransferRequest['destination'], string>;

/** A destination object's fields as one type reads them: each required one checked, any other refused. */
class DestinationFields {
  constructor(
    readonly raw: DestinationObject,
    private readonly type: DestinationType,
  ) {}

  /** A required field, matched against its pattern when it has one. */
  need(field: string, pattern?: RegExp, hint?: string): string {
    const value = this.raw[field];
    if (value === undefined)
      throw validationError(
        `destination.${field}`,
        `destination.${field} is required for ${this.type}`,
        'missing',
      );
    if (pattern && !pattern.test(value)) {
      throw validationError(
        `destination.${field}`,
        `destination.${field} ${hint ?? 'is not valid'}`,
        'invalid_format',
      );
    }
    return value;
  }

  /** Refuses the first field (other than `type`) that is not one of the type's. */
  allowOnly(fields: string[]): void {
    for (const key of Object.keys(this.raw)) {
      if (key !== 'type' && !fields.includes(key)) {
        throw validationError(
          `destination.${key}`,
          `destination.${key} is not a field of a ${this.type} destination`,
          'unknown_field',
        );
      }
    }
  }
}

function normaliseDestination(raw: CreateTransferRequest['destination']): Destination {
  if (typeof raw === 'string') return { type: 'wallet', wallet: raw };
  const type = requireOneOf(raw.type, DESTINATION_TYPES, 'destination.type');
  const fields = new DestinationFields(raw, type);
  switch (type) {
    case 'mobile_money':
      return mobileMoneyDestination(fields);
    case 'bank_account':
      fields.allowOnly(['bank_code', 'account_number', 'account_name']);
      return {
        type,
        bank_code: fields.need('bank_code', /^[A-Za-z0-9]{2,11}$/, 'must be 2-11 letters or digits'),
        account_number: fields.need(
          'account_number',
          ACCOUNT_TEXT_PATTERN,
          'must be 1-34 letters, digits, spaces or dashes',
        ),
        ...(raw.account_name ? { account_name: raw.account_name } : {}),
      };
    case 'paybill':
      fields.allowOnly(['business_number', 'account_reference']);
      return {
        type,
        business_number: fields.need('business_number', /^[0-9]{5,7}$/, 'must be 5-7 digits'),
        account_reference: fields.need(
          'account_reference',
          ACCOUNT_TEXT_PATTERN,
          'must be 1-34 letters, digits, spaces or dashes',
        ),
      };
    case 'till':
      fields.allowOnly(['till_number']);
      return { type, till_number: fields.need('till_number', /^[0-9]{5,7}$/, 'must be 5-7 digits') };
    case 'card':
      fields.allowOnly(['token']);
      return {
        type,
        token: fields.need(
          'token',
          /^tok_[A-Za-z0-9_]{6,64}$/,
          "must be a card token ('tok_…'); card numbers are never accepted",
        ),
      };
    case 'wallet':
      fields.allowOnly(['wallet']);
      return { type, wallet: fields.need('wallet') };
    case 'crypto_address':
      fields.allowOnly(['asset', 'network', 'address']);
      return cryptoAddressDestination(fields.need('asset'), fields.need('network'), fields.need('address'));
  }
}

/** A mobile-money destination: a known network, and a phone in international format on that network. */
function mobileMoneyDestination(fields: DestinationFields): Destination {
  fields.allowOnly(['network', 'phone', 'name']);
  const network = requireOneOf(fields.need('network'), MOBILE_NETWORKS, 'destination.network');
  const phone = fields.need('phone', PHONE, 'must be in international format, e.g. +254712345678');
  if (!phoneMatchesNetwork(phone, network)) {
    throw validationError(
      'destination.phone',
      `${phone} is not a number on the ${network} network`,
      'network_mismatch',
    );
  }
  const { name } = fields.raw;
  return {
    type: 'mobile_money',
    network: network as MobileNetwork,
    phone,
    ...(name ? { name } : {}),
  };
}

export interface CheckedTransfer {
  currency: Currency;
  destination: Destination;
  rail: Rail;
  amountMinor: bigint;
  /** The wallet paid, for a wallet destination. */
  destinationWallet: WalletIdentity | null;
}

/**
 * The checks of a transfer request that need nothing but its wallets: currency, destination, rail, amount
 * and the rail's bounds and step, and a wallet destination's existence and currency. Throws the first fault, naming
 * its field. Shared by single transfers and payment batch items.
 */
export function checkTransferRequest(
  request: Pick<CreateTransferRequest, 'destination' | 'amount' | 'currency' | 'rail'>,
  source: WalletIdentity,
  wallets: ReadonlyMap<string, WalletIdentity>,
): CheckedTransfer {
  requireSourceCurrency(request.currency, source);
  const currency: Currency = source.currency;
  const destination = normaliseDestination(request.destination);
  const impliedRail = RAIL_OF_DESTINATION[destination.type];
  if (request.rail !== undefined && request.rail !== impliedRail) {
    throw validationError(
      'rail',
      `rail must be '${impliedRail}' for a ${destination.type} destination (one of ${RAILS.join(', ')})`,
      'rail_mismatch',
    );
  }
  const rail: Rail = impliedRail;
  const amountMinor = checkSingleAmount(
    parseAmount(request.amount, currency, 'amount', numberSourceOf(request, 'amount')),
    currency,
  );
  const bounds = railBounds(rail, currency);
  if (!bounds)
    throw validationError('currency', `the ${rail} rail does not carry ${currency}`, 'unsupported_by_rail');
  if (amountMinor < bounds.min || amountMinor > bounds.max) {
    throw validationError(
      'amount',
      `amount is outside the ${rail} rail's bounds: ${railBoundsSentence(rail, currency, bounds)}`,
      'out_of_range',
    );
  }
  checkRailAmountStep(
    rail,
    destination.type === 'mobile_money' ? destination.network : undefined,
    currency,
    amountMinor,
  );
  const destinationWallet =
    destination.type === 'wallet'
      ? checkDestinationWallet(destination.wallet, source, currency, wallets)
      : null;
  return { currency, destination, rail, amountMinor, destinationWallet };
}

/** A wallet destination: a wallet id of the organization, not the source, holding the transfer's currency. */
function checkDestinationWallet(
  walletId: string,
  source: WalletIdentity,
  currency: Currency,
  wallets: ReadonlyMap<string, WalletIdentity>,
): WalletIdentity {
  if (!isId('wallet', walletId)) {
    throw validationError(
      'destination',
      'destination must be a wallet id (wallet_…) or a destination object',
      'invalid_format',
    );
  }
  const target = wallets.get(walletId);
  if (!target) throw resourceMissing('wallet', walletId, 'destination');
  requirePayableDestination(target, source.id, currency);
  return target;
}
