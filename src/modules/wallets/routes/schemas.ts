/** Wallets on the wire: the wallet with its balances and account details, its balance, and its create body. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { WALLET_STATUS_REASONS, WALLET_STATUSES } from '../../../domain/wallets.ts';
import { closedObjectSchema } from '../../../http/routeKit.ts';
import { apiObjectSchema, idFirstApiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  balanceProperties,
  currencySchema,
  idSchema,
  metadataSchema,
  timestampSchema,
} from '../../../http/schemas.ts';

/** A wallet's account details, as the wallet embeds them and `POST /v1/wallets/{id}/account-details` answers. */
export const accountDetailsProperties = {
  account_number: {
    type: 'string',
    pattern: '^[1-9][0-9]{11}$',
    description:
      'What an outsider pays into: 12 digits, the last an ISO/IEC 7064 MOD 11-2 check digit, unique in the organization and under the bank code, never reused.',
    examples: ['482100365571'],
  },
  bank_code: {
    type: 'string',
    description:
      'The sponsor bank’s code the number was issued under (as a `bank_account` destination names it).',
    examples: ['01100'],
  },
  bank_name: { type: 'string', examples: ['Equity Bank Kenya'] },
  virtual_reference: {
    type: 'string',
    description:
      'The wallet’s virtual account reference (`MK`, 10 digits, 2 check digits), which bank collections quote; the same as `GET /v1/wallets/{id}/virtual-account`.',
  },
  created_at: timestampSchema,
} as const;

export const accountDetailsSchema = apiObjectSchema(
  'AccountDetails',
  'account_details',
  'What outsiders pay a wallet by (a digital account): issued once, never changed.',
  { wallet: idSchema(ID_PREFIXES.wallet, 'Wallet id.'), ...accountDetailsProperties },
);

export const walletSchema = idFirstApiObjectSchema(
  'Wallet',
  'wallet',
  'A wallet holds money of one currency for one customer.',
  {
    id: idSchema(ID_PREFIXES.wallet, 'Wallet id.'),
    owner: idSchema(ID_PREFIXES.customer, 'The owning customer.'),
    currency: currencySchema,
    status: {
      type: 'string',
      enum: WALLET_STATUSES,
      description:
        '`frozen` wallets neither send nor receive (a return is still credited); `closed` wallets are empty for good.',
    },
    status_reason: {
      type: ['string', 'null'],
      enum: [...WALLET_STATUS_REASONS, null],
      description: 'Why the status last changed (freeze, unfreeze or close); null while it never has.',
    },
    status_changed_at: { ...timestampSchema, type: ['string', 'null'] },
    balance: {
      type: 'object',
      required: ['available', 'pending', 'current'],
      properties: balanceProperties,
    },
    account_details: {
      type: ['object', 'null'],
      description:
        'Its digital account: what outsiders pay it by. Issued when the wallet is created once the organization has digital-account settings, or with `POST /v1/wallets/{id}/account-details`; null until then.',
      required: Object.keys(accountDetailsProperties),
      properties: accountDetailsProperties,
    },
    metadata: metadataSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
);

export const balanceSchema = {
  $id: 'Balance',
  type: 'object',
  description: "A wallet's balances, as decimal strings at the currency's exponent.",
  required: ['object', 'wallet', 'currency', 'available', 'pending', 'current'],
  properties: {
    object: { type: 'string', enum: ['balance'] },
    wallet: idSchema(ID_PREFIXES.wallet, 'Wallet id.'),
    currency: currencySchema,
    ...balanceProperties,
    as_of: {
      ...timestampSchema,
      description:
        'Present when asked with `as_of`: the instant the balances are as of (entries created strictly before it count).',
    },
  },
} as const;

export const walletCreateBodySchema = closedObjectSchema(
  {
    owner: idSchema(
      ID_PREFIXES.customer,
      'The customer who owns the wallet: a customer of your organization.',
    ),
    currency: currencySchema,
    metadata: metadataSchema,
  },
  ['owner', 'currency'],
);

/** The shortest instant the query string takes, in characters: a date (`2026-11-30`). */
const INSTANT_TEXT_LENGTH_MIN = 10;

/** The longest, in characters: room above a time to the millisecond with its offset (29); the domain checks the form. */
const INSTANT_TEXT_LENGTH_MAX = 35;

/** An instant as the query string takes it: a date or an RFC 3339 time (read and checked by the domain). */
export const instantQuerySchema = (description: string) =>
  ({
    type: 'string',
    minLength: INSTANT_TEXT_LENGTH_MIN,
    maxLength: INSTANT_TEXT_LENGTH_MAX,
    description,
  }) as const;

/** The wallet's response schemas, registered by $id. */
export const WALLET_SCHEMAS = [walletSchema, accountDetailsSchema, balanceSchema];
