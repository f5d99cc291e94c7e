/** Response schemas of digital-asset routes and the Travel Rule (settings, a transfer's data). */
import { DEFAULT_JURISDICTION, TRAVEL_RULE_JURISDICTIONS_MAX } from '../../../domain/decisions/travelRule.ts';
import { ROUTE_STATUSES } from '../../../domain/digitalAssets.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { SUPPORTED_CURRENCIES } from '../../../domain/money.ts';
import { RATE_FRACTION_DIGITS_MAX, RATE_PATTERN_SOURCE } from '../../../domain/rates.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  digitalAssetNetworkSchema,
  digitalAssetSchema,
  idSchema,
  nullableStringSchema,
  timestampSchema,
} from '../../../http/schemas.ts';

export const digitalAssetRouteSchema = apiObjectSchema(
  'DigitalAssetRoute',
  'digital_asset_route',
  'An asset on a network, and whether the organization allows transfers on it.',
  {
    asset: digitalAssetSchema,
    network: digitalAssetNetworkSchema,
    status: {
      type: 'string',
      enum: ROUTE_STATUSES,
      description: 'Only `enabled` routes take transfers; any other is a 422 `route_not_approved`.',
    },
    limits: {
      type: 'object',
      description:
        'Withdrawal limits on the route, in the asset: a withdrawal above `single_max`, or one that would take what the organization withdrew on the route this UTC day above `daily_max`, is a 422 `limit_exceeded` (problem member `limit`: `route_single` or `route_daily`). Null: no limit beyond the rail’s bounds.',
      required: ['single_max', 'daily_max'],
      properties: {
        single_max: { type: ['string', 'null'], examples: ['50000.000000'] },
        daily_max: { type: ['string', 'null'], examples: ['250000.000000'] },
      },
    },
    updated_at: timestampSchema,
  },
);

const usdAmountSchema = {
  type: 'string',
  pattern: '^[0-9]+(\\.[0-9]{1,2})?$',
  description: 'USD, a decimal string with at most two decimals.',
  examples: ['1000.00'],
} as const;

const rateSchema = {
  type: 'string',
  pattern: RATE_PATTERN_SOURCE,
  description: `USD for one unit of the currency: a positive decimal string, at most ${RATE_FRACTION_DIGITS_MAX} decimals.`,
  examples: ['0.0077'],
} as const;

/** The settings' two tables, as the request gives them and the response shows them. */
export const travelRuleSettingsFields = {
  thresholds: {
    type: 'object',
    description: `USD thresholds by jurisdiction: \`${DEFAULT_JURISDICTION}\` (required) and ISO 3166-1 alpha-2 country codes. A transfer whose originating customer's verified country has an entry uses it; any other uses \`${DEFAULT_JURISDICTION}\`.`,
    minProperties: 1,
    maxProperties: TRAVEL_RULE_JURISDICTIONS_MAX,
    propertyNames: { pattern: `^(${DEFAULT_JURISDICTION}|[A-Z]{2})$` },
    additionalProperties: usdAmountSchema,
    examples: [{ [DEFAULT_JURISDICTION]: '1000.00', KE: '500.00' }],
  },
  rates: {
    type: 'object',
    description:
      'USD value of one unit of each currency, used to convert amounts exactly (no floating point). Must include USDC and USDT.',
    minProperties: 1,
    maxProperties: SUPPORTED_CURRENCIES.length,
    propertyNames: { enum: SUPPORTED_CURRENCIES },
    additionalProperties: rateSchema,
    examples: [{ USDC: '1', USDT: '1', KES: '0.0077' }],
  },
} as const;

export const travelRuleSettingsSchema = apiObjectSchema(
  'TravelRuleSettings',
  'travel_rule_settings',
  'When digital-asset transfers need Travel Rule data: thresholds per jurisdiction and the rates table.',
  {
    ...travelRuleSettingsFields,
    updated_at: timestampSchema,
  },
);

const partySchema = (description: string, fields: string[], nullable: string[]) => ({
  type: 'object',
  description,
  required: fields,
  properties: Object.fromEntries(
    fields.map((f) => [f, nullable.includes(f) ? { type: ['string', 'null'] } : { type: 'string' }]),
  ),
});

export const travelRuleRecordSchema = apiObjectSchema(
  'TravelRuleRecord',
  'travel_rule',
  'A transfer’s Travel Rule data as it was given and checked, with the decision that applied. Operators only.',
  {
    reference: idSchema(ID_PREFIXES.evidence, 'The evidence record holding the data.'),
    transfer_id: idSchema(ID_PREFIXES.transfer, 'The transfer.'),
    required: { type: 'boolean', description: 'Whether the amount reached the threshold.' },
    jurisdiction: { type: 'string', description: 'The country whose threshold applied, or `default`.' },
    threshold: { ...usdAmountSchema, description: 'The threshold that applied, USD.' },
    amount_usd: nullableStringSchema(
      'The amount converted to USD, exactly; null when the currency had no rate.',
    ),
    rate: nullableStringSchema('The rate used.'),
    asset: digitalAssetSchema,
    network: digitalAssetNetworkSchema,
    address: { type: 'string' },
    originator: partySchema(
      'Who sent.',
      ['name', 'account', 'address', 'national_id', 'date_of_birth'],
      ['address', 'national_id', 'date_of_birth'],
    ),
    beneficiary: partySchema('Who receives.', ['name', 'account', 'institution'], ['institution']),
    created_at: timestampSchema,
  },
);

export const TRAVEL_RULE_SCHEMAS = [
  digitalAssetRouteSchema,
  travelRuleSettingsSchema,
  travelRuleRecordSchema,
];

/** A Travel Rule text field: its content rules (length, format) are checked with the rule, as a 422. */
function travelRuleField(description: string, example: string) {
  return { type: 'string', maxLength: TRAVEL_RULE_FIELD_LENGTH_MAX, description, examples: [example] };
}

/** Bounds a field's size in the body; content rules are stricter (src/domain/decisions/travelRule.ts). */
const TRAVEL_RULE_FIELD_LENGTH_MAX = 1_000;

export const travelRuleRequestSchema = {
  type: 'object',
  description:
    'Travel Rule data, for a `crypto_address` destination: required when the amount in USD reaches the threshold of the originating customer’s jurisdiction (1,000.00 by default; see `GET /v1/travel-rule/settings`), otherwise optional. Missing or malformed data, when required, is a 422 `travel_rule_required` that names every field at fault. Kept as evidence, never echoed.',
  additionalProperties: false,
  properties: {
    originator: {
      type: 'object',
      description:
        'Who sends: `name`, `account`, and at least one of `address`, `national_id` or `date_of_birth`.',
      additionalProperties: false,
      properties: {
        name: travelRuleField('Full name, at most 200 characters.', 'Amina Wanjiru'),
        account: travelRuleField(
          'The originator’s account: the paying wallet or an account number.',
          'wallet_01jcz3m5e7x8y9a0b1c2d3e4f5',
        ),
        address: travelRuleField('Postal address, at most 500 characters.', '12 Moi Avenue, Nairobi, KE'),
        national_id: travelRuleField('National identity number: 4-32 letters, digits or dashes.', 'A1234567'),
        date_of_birth: travelRuleField('YYYY-MM-DD.', '1990-04-12'),
      },
    },
    beneficiary: {
      type: 'object',
      description: 'Who receives: `name`; `account` defaults to the destination address.',
      additionalProperties: false,
      properties: {
        name: travelRuleField('Full name, at most 200 characters.', 'Juma Otieno'),
        account: travelRuleField(
          'The beneficiary’s account; the destination address when omitted.',
          '0x52908400098527886e0f7030069857d2e4169ee7',
        ),
        institution: travelRuleField(
          'The receiving institution (a VASP), when known.',
          'Example Exchange Ltd',
        ),
      },
    },
  },
} as const;
