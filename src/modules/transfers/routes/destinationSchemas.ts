/**
 * A transfer's destination as the OpenAPI document describes it: one object per destination type, told
 * apart by `type`, and the limits on a destination field that the transfer's create body applies too.
 */
import { PHONE_PATTERN } from '../../../domain/contactDetails.ts';
import {
  ADDRESS_FORMATS,
  DIGITAL_ASSET_NETWORK_FAMILIES,
  DIGITAL_ASSET_NETWORKS,
  DIGITAL_ASSETS,
} from '../../../domain/digitalAssets.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  DESTINATION_TYPES,
  type DestinationType,
  MOBILE_NETWORK_COUNTRY_CODES,
  MOBILE_NETWORKS,
} from '../../../domain/transfers.ts';
import { componentRef, idSchema } from '../../../http/schemas.ts';

/** The longest value of one destination field (a phone number, an account number, a token). */
export const DESTINATION_FIELD_LENGTH_MAX = 64;
/** `type` plus at most three fields (bank_account: bank_code, account_number, account_name). */
export const DESTINATION_PROPERTIES_MAX = 4;

function destinationField(description: string, example: string, extra: Record<string, unknown> = {}) {
  return {
    type: 'string',
    maxLength: DESTINATION_FIELD_LENGTH_MAX,
    description,
    examples: [example],
    ...extra,
  };
}

/** One destination type's object, as the document describes it. */
function destinationVariant(
  type: DestinationType,
  description: string,
  fields: Record<string, object>,
  required: string[],
) {
  return {
    type: 'object',
    description,
    required: ['type', ...required],
    additionalProperties: false,
    properties: { type: { type: 'string', const: type }, ...fields },
  };
}

const accountText = (what: string) => `${what}: 1-34 letters, digits, spaces or dashes.`;

/**
 * Each destination type's fields, as src/modules/transfers/useCases/requests.ts checks them. The examples are accepted by the
 * sandbox (test/openapi.test.ts sends each one).
 */
const DESTINATION_VARIANTS: Record<DestinationType, { name: string; schema: object }> = {
  mobile_money: {
    name: 'MobileMoneyDestination',
    schema: destinationVariant(
      'mobile_money',
      'A mobile-money account (rail `mobile_money`).',
      {
        network: {
          type: 'string',
          enum: MOBILE_NETWORKS,
          description: `The network; the phone number must carry one of its country codes (${MOBILE_NETWORKS.map((n) => `${n}: ${MOBILE_NETWORK_COUNTRY_CODES[n].map((c) => `+${c}`).join(', ')}`).join('; ')}).`,
          examples: ['mpesa'],
        },
        phone: destinationField('International (E.164) format.', '+254700000000', { pattern: PHONE_PATTERN }),
        name: destinationField("Optional: the recipient's name.", 'Amina Wanjiru'),
      },
      ['network', 'phone'],
    ),
  },
  bank_account: {
    name: 'BankAccountDestination',
    schema: destinationVariant(
      'bank_account',
      'A bank account (rail `bank`).',
      {
        bank_code: destinationField('The bank: 2-11 letters or digits.', '01'),
        account_number: destinationField(accountText('The account number'), '0123456789'),
        account_name: destinationField("Optional: the account holder's name.", 'Amina Wanjiru'),
      },
      ['bank_code', 'account_number'],
    ),
  },
  paybill: {
    name: 'PaybillDestination',
    schema: destinationVariant(
      'paybill',
      'A business paybill (rail `paybill`).',
      {
        business_number: destinationField('The paybill number: 5-7 digits.', '888880'),
        account_reference: destinationField(accountText('The account at the business'), 'INV-1042'),
      },
      ['business_number', 'account_reference'],
    ),
  },
  till: {
    name: 'TillDestination',
    schema: destinationVariant(
      'till',
      'A merchant till (rail `till`).',
      { till_number: destinationField('The till number: 5-7 digits.', '123456') },
      ['till_number'],
    ),
  },
  card: {
    name: 'CardDestination',
    schema: destinationVariant(
      'card',
      'A card, by token (rail `card`). Card numbers are never accepted.',
      {
        token: destinationField(
          'A card token: `tok_` and 6-64 letters, digits or underscores.',
          'tok_sandbox_visa',
        ),
      },
      ['token'],
    ),
  },
  wallet: {
    name: 'WalletDestination',
    schema: destinationVariant(
      'wallet',
      'Another wallet of your organization, in the same currency (rail `internal`).',
      { wallet: idSchema(ID_PREFIXES.wallet, 'The receiving wallet.') },
      ['wallet'],
    ),
  },
  crypto_address: {
    name: 'CryptoAddressDestination',
    schema: destinationVariant(
      'crypto_address',
      'A stablecoin address on a named network (rail `digital_asset`), on a route the organization has approved (`GET /v1/digital-asset-routes`). At or above the Travel Rule threshold the transfer needs `travel_rule` data.',
      {
        asset: destinationField('The stablecoin: the transfer’s currency.', 'USDC', { enum: DIGITAL_ASSETS }),
        network: destinationField('The network.', 'ethereum', { enum: DIGITAL_ASSET_NETWORKS }),
        address: destinationField(
          `The receiving address, as its network writes it: ${DIGITAL_ASSET_NETWORKS.map((n) => `${n} ${ADDRESS_FORMATS[DIGITAL_ASSET_NETWORK_FAMILIES[n]].wording}`).join('; ')}.`,
          '0x52908400098527886e0f7030069857d2e4169ee7',
        ),
      },
      ['asset', 'network', 'address'],
    ),
  },
};

/**
 * Schemas that exist only in the OpenAPI document, by component name: the destination as a `oneOf` told
 * apart by `type`, so generated clients get one type per destination. Validation keeps the flat schemas
 * (transferSchemas.ts), which report the field at fault (a oneOf reports every branch that failed).
 */
export const DOCUMENT_ONLY_SCHEMAS: Record<string, object> = {
  ...Object.fromEntries(Object.values(DESTINATION_VARIANTS).map(({ name, schema }) => [name, schema])),
  TransferDestination: {
    description:
      'Where the money goes: an object whose `type` says which fields it has; the rail follows from the type.',
    oneOf: Object.values(DESTINATION_VARIANTS).map(({ name }) => componentRef(name)),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        DESTINATION_TYPES.map((type) => [type, componentRef(DESTINATION_VARIANTS[type].name).$ref]),
      ),
    },
  },
  TransferDestinationRequest: {
    description:
      'Form A: a destination object (its `type` decides the rail). Form B: a wallet id, for a transfer to another wallet of your organization on the `internal` rail.',
    oneOf: [
      componentRef('TransferDestination'),
      idSchema(ID_PREFIXES.wallet, 'Form B: the receiving wallet.'),
    ],
  },
};
