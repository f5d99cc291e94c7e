/**
 * Schemas of the compliance surface: evidence, and what reviews, alerts, freezes and verifications return;
 * and what a verification submits, one form per customer type.
 */

import { AML_ALERT_STATUSES, AML_DISPOSITIONS } from '../../../domain/amlAlerts.ts';
import { PHONE_PATTERN } from '../../../domain/contactDetails.ts';
import { AML_ACTIONS, AML_RULE_TYPES } from '../../../domain/decisions/aml.ts';
import { EVIDENCE_KINDS } from '../../../domain/evidence.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { REVIEW_KINDS, REVIEW_STATUSES } from '../../../domain/reviews.ts';
import {
  BENEFICIAL_OWNERS_MAX,
  COUNTRY_PATTERN,
  ID_NUMBER_PATTERN,
  LEGAL_NAME_LENGTH_MAX,
  NATIONAL_ID_TYPES,
  OWNERSHIP_BP_TOTAL,
  VERIFICATION_FIELDS,
  VERIFICATION_REASONS,
  VERIFICATION_STATUSES,
  type VerificationSubmission,
} from '../../../domain/verifications.ts';
import { closedObjectSchema } from '../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  componentRef,
  DOCUMENTED_AS,
  idSchema,
  nullableIdSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import { postalAddressSchema } from '../../customers/index.ts';

const SHA256_HEX_PATTERN = '^[0-9a-f]{64}$';

/** Text that may not be empty, of at most `maxLength` characters: a name, a reference, a note. */
export function textSchema(maxLength: number, description?: string) {
  return { type: 'string', minLength: 1, maxLength, ...(description === undefined ? {} : { description }) };
}

export const evidenceSchema = {
  $id: 'Evidence',
  type: 'object',
  description:
    'One compliance decision, append-only and hash-chained per organization. Every field but `object` and `hash` is the record as it was hashed: canonicalise those fields with RFC 8785 (JSON Canonicalization Scheme) and the SHA-256 of that text, in lower-case hex, is `hash`; the next record names it as its `previous_hash`.',
  required: [
    'object',
    'id',
    'organization_id',
    'sequence',
    'previous_hash',
    'kind',
    'actor',
    'transfer_id',
    'customer_id',
    'wallet_id',
    'data',
    'created_at',
    'hash',
  ],
  properties: {
    object: { type: 'string', enum: ['evidence'] },
    id: idSchema(ID_PREFIXES.evidence, 'Evidence id.'),
    organization_id: idSchema(ID_PREFIXES.organization, 'The organization whose chain holds the record.'),
    sequence: { type: 'integer', minimum: 1, description: 'Place in the organization’s chain, from 1.' },
    previous_hash: {
      type: 'string',
      pattern: SHA256_HEX_PATTERN,
      description: 'The `hash` of the record before this one; 64 zeros for the first record.',
    },
    kind: { type: 'string', enum: EVIDENCE_KINDS, description: 'What was decided.' },
    actor: {
      type: 'string',
      description:
        '`system` for the service’s own decisions, the id of the API key an operator used, or the id of the console session (`csn_…`) a member signed in with.',
    },
    actor_member: idSchema(
      ID_PREFIXES.member,
      'The member the API key acts for, or who signed in to the console session; present only then (and then part of what is hashed).',
    ),
    transfer_id: nullableIdSchema(ID_PREFIXES.transfer, 'The transfer the decision concerns, if any.'),
    customer_id: nullableIdSchema(ID_PREFIXES.customer, 'The customer the decision concerns, if any.'),
    wallet_id: nullableIdSchema(ID_PREFIXES.wallet, 'The wallet the decision concerns, if any.'),
    data: {
      type: 'object',
      additionalProperties: true,
      description: 'The decision: its inputs, the rule, list or version that decided, and the outcome.',
    },
    created_at: timestampSchema,
    hash: { type: 'string', pattern: SHA256_HEX_PATTERN, description: 'SHA-256 of the canonical record.' },
  },
} as const;

export const reviewSchema = apiObjectSchema(
  'Review',
  'review',
  'A compliance review case: a transfer held `in_review` (its funds held) because its counterparty matched the sanctions list (`screening`), an AML rule asked for review (`aml`) or its wallet is frozen (`frozen_wallet`); or a stablecoin deposit held uncredited because the Travel Rule required the originator’s data and it did not come (`travel_rule`). An operator clears it (the transfer goes on; the deposit, given the data, is credited) or rejects it (the transfer is rejected and its hold released; the deposit is owed back).',
  {
    id: idSchema(ID_PREFIXES.review, 'Review id.'),
    kind: { type: 'string', enum: REVIEW_KINDS },
    status: { type: 'string', enum: REVIEW_STATUSES },
    transfer: nullableIdSchema(ID_PREFIXES.transfer, 'The held transfer.'),
    deposit: nullableIdSchema(ID_PREFIXES.deposit, 'The held stablecoin deposit (a `travel_rule` case).'),
    customer: nullableIdSchema(ID_PREFIXES.customer, 'The customer it concerns.'),
    wallet: nullableIdSchema(ID_PREFIXES.wallet, 'The paying wallet.'),
    findings: {
      type: 'object',
      additionalProperties: true,
      description:
        'What opened the case: `screening` (list version, the name screened, the entries matched and their scores), `aml_hits` (each rule, its version, the reason and what was observed), or a `reason` with the facts (`credit_to_frozen_wallet`; `travel_rule_missing` with the deposit’s amount, network, transaction and the evidence record of the missing data).',
    },
    note: nullableStringSchema('The operator’s note on the decision.'),
    decided_by: nullableStringSchema('The API key that decided it.'),
    created_at: timestampSchema,
    decided_at: nullableTimestampSchema,
  },
);

export const amlRuleSchema = apiObjectSchema(
  'AmlRule',
  'aml_rule',
  'An AML transaction-monitoring rule of the organization, evaluated on every new transfer in its currency. `parameters` depend on `type` (money as decimal strings in the currency, windows in seconds, shares in basis points).',
  {
    id: idSchema(ID_PREFIXES.amlRule, 'Rule id.'),
    name: { type: 'string' },
    type: { type: 'string', enum: AML_RULE_TYPES },
    parameters: { type: 'object', additionalProperties: true },
    action: {
      type: 'string',
      enum: AML_ACTIONS,
      description:
        '`alert` opens an alert and lets the transfer through; `review` holds it `in_review`; `block` refuses it (422 `compliance_blocked`).',
    },
    enabled: { type: 'boolean' },
    version: {
      type: 'integer',
      minimum: 1,
      description: 'One more on every change; evidence names the version that decided.',
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
);

export const amlAlertSchema = apiObjectSchema(
  'AmlAlert',
  'aml_alert',
  'What an AML rule saw in a transfer, or in a conversion (`conversion_quote`: the quote whose execution fired it). At most one alert per wallet and rule is open at a time.',
  {
    id: idSchema(ID_PREFIXES.amlAlert, 'Alert id.'),
    status: { type: 'string', enum: AML_ALERT_STATUSES },
    rule: idSchema(ID_PREFIXES.amlRule, 'The rule that fired.'),
    rule_type: { type: 'string', enum: AML_RULE_TYPES },
    rule_version: { type: 'integer', minimum: 1 },
    action: { type: 'string', enum: ['alert', 'review'] },
    transfer: nullableIdSchema(
      ID_PREFIXES.transfer,
      'The transfer that fired it; null when a conversion did.',
    ),
    conversion_quote: nullableIdSchema(
      ID_PREFIXES.conversionQuote,
      'The conversion quote whose execution fired it (the conversion it became, or one refused); null for a transfer.',
    ),
    wallet: idSchema(ID_PREFIXES.wallet, 'The paying wallet.'),
    customer: idSchema(ID_PREFIXES.customer, 'The paying wallet’s owner.'),
    reason: { type: 'string' },
    observed: { type: 'object', additionalProperties: true, description: 'What the rule measured.' },
    disposition: { type: ['string', 'null'], enum: [...AML_DISPOSITIONS, null] },
    note: { type: ['string', 'null'] },
    resolved_by: nullableStringSchema('The API key that resolved it.'),
    created_at: timestampSchema,
    resolved_at: nullableTimestampSchema,
  },
);

export const verificationSchema = apiObjectSchema(
  'Verification',
  'verification',
  'A KYC (individual) or KYB (business) verification: what was submitted (id numbers masked to their last 4 characters) and its outcome.',
  {
    id: idSchema(ID_PREFIXES.verification, 'Verification id.'),
    customer: idSchema(ID_PREFIXES.customer, 'The customer verified.'),
    type: { type: 'string', enum: ['individual', 'business'] },
    status: { type: 'string', enum: VERIFICATION_STATUSES },
    reason: {
      type: ['string', 'null'],
      enum: [...VERIFICATION_REASONS, null],
      description: 'Why it did not pass.',
    },
    submission: {
      type: 'object',
      additionalProperties: true,
      description: 'As submitted, id numbers masked.',
    },
    decided_by: {
      type: ['string', 'null'],
      enum: ['provider', 'operator', null],
      description: 'The verification provider (the sandbox simulator) or an operator; null while pending.',
    },
    created_at: timestampSchema,
    decided_at: nullableTimestampSchema,
  },
);

const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';
const nationalIdSchema = closedObjectSchema(
  {
    type: { type: 'string', enum: NATIONAL_ID_TYPES },
    number: {
      type: 'string',
      pattern: ID_NUMBER_PATTERN,
      description: 'Shown back masked to its last 4 characters.',
    },
  },
  ['type', 'number'],
);

/** Every field a submission may carry, by name; each type's form takes those VERIFICATION_FIELDS lists. */
const SUBMISSION_FIELD_SCHEMAS = {
  legal_name: textSchema(LEGAL_NAME_LENGTH_MAX),
  date_of_birth: { type: 'string', pattern: DATE_PATTERN, description: 'YYYY-MM-DD.' },
  national_id: nationalIdSchema,
  phone: { type: 'string', pattern: PHONE_PATTERN, description: 'E.164.' },
  address: postalAddressSchema,
  registration_number: { type: 'string', pattern: ID_NUMBER_PATTERN },
  country: {
    type: 'string',
    pattern: COUNTRY_PATTERN,
    description: 'ISO 3166-1 alpha-2: where it is registered.',
  },
  beneficial_owners: {
    type: 'array',
    minItems: 1,
    maxItems: BENEFICIAL_OWNERS_MAX,
    description: 'Every owner of 25 % or more; shares in basis points, at most 10,000 in all.',
    items: closedObjectSchema(
      {
        name: textSchema(LEGAL_NAME_LENGTH_MAX),
        date_of_birth: { type: 'string', pattern: DATE_PATTERN },
        national_id: nationalIdSchema,
        ownership_bp: { type: 'integer', minimum: 1, maximum: OWNERSHIP_BP_TOTAL },
      },
      ['name', 'date_of_birth', 'national_id', 'ownership_bp'],
    ),
  },
} as const;

type SubmissionType = VerificationSubmission['type'];

/** Each type's form: its `type`, then every field VERIFICATION_FIELDS names for it, all required. */
const SUBMISSION_FORMS: Record<SubmissionType, { name: string; description: string }> = {
  individual: {
    name: 'IndividualVerificationSubmission',
    description: 'KYC of an individual customer.',
  },
  business: {
    name: 'BusinessVerificationSubmission',
    description: 'KYB of a business customer, with its beneficial owners.',
  },
};

function submissionForm(type: SubmissionType) {
  const fields = VERIFICATION_FIELDS[type];
  return {
    type: 'object',
    description: SUBMISSION_FORMS[type].description,
    additionalProperties: false,
    required: ['type', ...fields],
    properties: {
      type: { type: 'string', const: type, description: 'The customer’s type.' },
      ...Object.fromEntries(fields.map((field) => [field, SUBMISSION_FIELD_SCHEMAS[field]])),
    },
  };
}

const SUBMISSION_TYPES = Object.keys(SUBMISSION_FORMS) as SubmissionType[];
const submissionDescription =
  'One form per customer type, told apart by `type`: an individual sends `legal_name`, `date_of_birth`, `national_id`, `phone`, `address`; a business `legal_name`, `registration_number`, `country`, `beneficial_owners`. Every missing or unknown field is named in one 400 answer.';

/**
 * A verification's body as validated: the forms inline, picked by `type` (Ajv's discriminator), so the
 * faults named are the chosen form's alone. A field no form has is named even when no form is picked (no
 * or an unknown `type`). The document shows the `VerificationSubmission` component.
 */
export const verificationSubmissionSchema = {
  type: 'object',
  description: submissionDescription,
  required: ['type'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: SUBMISSION_TYPES },
    ...Object.fromEntries(Object.keys(SUBMISSION_FIELD_SCHEMAS).map((field) => [field, true])),
  },
  discriminator: { propertyName: 'type' },
  oneOf: SUBMISSION_TYPES.map(submissionForm),
  [DOCUMENTED_AS]: 'VerificationSubmission',
};

/** The submission's forms as named components of the OpenAPI document: one generated type per form. */
export const VERIFICATION_DOCUMENT_SCHEMAS: Record<string, object> = {
  ...Object.fromEntries(SUBMISSION_TYPES.map((type) => [SUBMISSION_FORMS[type].name, submissionForm(type)])),
  VerificationSubmission: {
    description: submissionDescription,
    oneOf: SUBMISSION_TYPES.map((type) => componentRef(SUBMISSION_FORMS[type].name)),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        SUBMISSION_TYPES.map((type) => [type, componentRef(SUBMISSION_FORMS[type].name).$ref]),
      ),
    },
  },
};

export const COMPLIANCE_SCHEMAS = [
  evidenceSchema,
  reviewSchema,
  amlRuleSchema,
  amlAlertSchema,
  verificationSchema,
];
