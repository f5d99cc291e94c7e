/** Customers on the wire: the customer, its postal address, and its create and update bodies. */
import { EMAIL_CHARS_MAX, PHONE_PATTERN } from '../../../domain/contactDetails.ts';
import { CUSTOMER_NAME_LENGTH_MAX, CUSTOMER_TYPES, KYC_STATUSES } from '../../../domain/customers.ts';
import { TIERS } from '../../../domain/decisions/limits.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { RISK_LEVELS } from '../../../domain/risk.ts';
import {
  ADDRESS_LINE_LENGTH_MAX,
  COUNTRY_PATTERN,
  POSTAL_CODE_LENGTH_MAX,
} from '../../../domain/verifications.ts';
import { closedObjectSchema } from '../../../http/routeKit.ts';
import { changeBodySchema } from '../../../http/schemaBuilders.ts';
import { idSchema, metadataSchema, timestampSchema } from '../../../http/schemas.ts';

const addressLine = { type: 'string', minLength: 1, maxLength: ADDRESS_LINE_LENGTH_MAX } as const;

/** A postal address: a customer's, and an individual's in a verification. */
export const postalAddressSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['line1', 'city', 'country'],
  properties: {
    line1: addressLine,
    line2: addressLine,
    city: addressLine,
    region: addressLine,
    postal_code: { type: 'string', minLength: 1, maxLength: POSTAL_CODE_LENGTH_MAX },
    country: { type: 'string', pattern: COUNTRY_PATTERN, description: 'ISO 3166-1 alpha-2.' },
  },
} as const;

export const customerSchema = {
  $id: 'Customer',
  type: 'object',
  description: 'A person or business that owns wallets.',
  required: [
    'id',
    'object',
    'type',
    'name',
    'email',
    'phone',
    'address',
    'kyc_status',
    'tier',
    'risk_level',
    'risk_level_overridden',
    'metadata',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: idSchema(ID_PREFIXES.customer, 'Customer id.'),
    object: { type: 'string', enum: ['customer'] },
    type: { type: 'string', enum: CUSTOMER_TYPES },
    name: { type: 'string' },
    email: { type: ['string', 'null'] },
    phone: { type: ['string', 'null'] },
    address: { ...postalAddressSchema, type: ['object', 'null'] },
    kyc_status: {
      type: 'string',
      enum: KYC_STATUSES,
      description: 'Follows the customer’s latest verification (`POST /v1/customers/{id}/verifications`).',
    },
    tier: {
      type: 'integer',
      enum: TIERS,
      description:
        '0 until verified; 1 a verified individual, 2 a verified business. Sets the transfer limits.',
    },
    risk_level: {
      type: 'string',
      enum: RISK_LEVELS,
      description:
        'Derived from verification, a confirmed sanctions match and open AML alerts, unless overridden by an operator.',
    },
    risk_level_overridden: { type: 'boolean' },
    metadata: metadataSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

export const customerCreateBodySchema = closedObjectSchema(
  {
    type: { type: 'string', enum: CUSTOMER_TYPES },
    name: { type: 'string', minLength: 1, maxLength: CUSTOMER_NAME_LENGTH_MAX },
    email: { type: 'string', format: 'email', maxLength: EMAIL_CHARS_MAX },
    phone: {
      type: 'string',
      pattern: PHONE_PATTERN,
      description: 'International (E.164) format, e.g. +254712345678.',
    },
    address: postalAddressSchema,
    metadata: metadataSchema,
  },
  ['type', 'name'],
);

export const customerUpdateBodySchema = changeBodySchema({
  name: customerCreateBodySchema.properties.name,
  email: { ...customerCreateBodySchema.properties.email, type: ['string', 'null'] },
  phone: { ...customerCreateBodySchema.properties.phone, type: ['string', 'null'] },
  address: { ...postalAddressSchema, type: ['object', 'null'] },
  metadata: metadataSchema,
});

/** The customer's response schemas, registered by $id. */
export const CUSTOMER_SCHEMAS = [customerSchema];
