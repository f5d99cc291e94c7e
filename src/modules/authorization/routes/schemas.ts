/** JSON Schemas of members, policies and approvals: the shapes the routes send and the document describes. */

import { MEMBER_ROLES, MEMBER_STATUSES } from '../../../domain/access.ts';
import { APPROVAL_RESOURCE_TYPES, APPROVAL_STATUSES, VOTE_DECISIONS } from '../../../domain/approvals.ts';
import { KYC_STATUSES } from '../../../domain/customers.ts';
import {
  APPROVAL_EXPIRES_IN_SECONDS_MAX,
  APPROVAL_EXPIRES_IN_SECONDS_MIN,
  APPROVAL_QUORUM_MAX,
  POLICY_ACTIONS,
  POLICY_DESCRIPTION_CHARS_MAX,
  POLICY_MATCH_VALUES_MAX,
  POLICY_OPERATIONS,
  POLICY_RULES_MAX,
  POLICY_WINDOW_SECONDS_MAX,
} from '../../../domain/decisions/policies.ts';
import { GOVERNED_CHANGE_KINDS } from '../../../domain/governedChanges.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { RISK_LEVELS } from '../../../domain/risk.ts';
import { DESTINATION_TYPES } from '../../../domain/transfers.ts';
import { apiObjectSchema, changeBodySchema, someOfSchema } from '../../../http/schemaBuilders.ts';
import {
  currencySchema,
  emailSchema,
  idSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
  transferRailSchema,
} from '../../../http/schemas.ts';
import { MEMBER_NAME_CHARS_MAX } from '../domain.ts';

const rolesSchema = someOfSchema(
  MEMBER_ROLES,
  '`initiator` creates transfers; `approver` votes on approvals; `admin` manages members and policies (and may initiate); `compliance` works the review and AML queues; `viewer` reads.',
);

export const memberSchema = apiObjectSchema(
  'Member',
  'member',
  'A person of the organization, by email, with signer roles. API keys may act for a member (`mkoba keys create --member EMAIL`): such a key never has more than the member’s roles grant, and what it does is recorded as the member’s.',
  {
    id: idSchema(ID_PREFIXES.member, 'Member id.'),
    email: { type: 'string', description: 'Lower-cased; unique in the organization.' },
    name: { type: ['string', 'null'] },
    roles: rolesSchema,
    status: {
      type: 'string',
      enum: MEMBER_STATUSES,
      description: '`removed`: their keys no longer work; their votes and actions stay on record.',
    },
    created_by: { type: 'string', description: 'The member or API key that added them, or `system`.' },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
);

const memberNameSchema = { type: 'string', minLength: 1, maxLength: MEMBER_NAME_CHARS_MAX } as const;

export const memberCreateBodySchema = {
  type: 'object',
  required: ['email', 'roles'],
  additionalProperties: false,
  properties: { email: emailSchema('ana@example.com'), roles: rolesSchema, name: memberNameSchema },
} as const;

export const memberUpdateBodySchema = changeBodySchema({ roles: rolesSchema, name: memberNameSchema });

const approvalRequirementSchema = {
  type: ['object', 'null'],
  description: 'With `require_approval`: who must approve, how many, and for how long the approval waits.',
  required: ['quorum', 'roles'],
  additionalProperties: false,
  properties: {
    quorum: {
      type: 'integer',
      minimum: 1,
      maximum: APPROVAL_QUORUM_MAX,
      description: 'Approving votes needed.',
    },
    roles: { ...rolesSchema, description: 'Roles whose members may vote.' },
    distinct_roles: {
      type: 'boolean',
      description: 'The approving votes must come from at least two distinct roles (quorum ≥ 2).',
    },
    expires_in_seconds: {
      type: 'integer',
      minimum: APPROVAL_EXPIRES_IN_SECONDS_MIN,
      maximum: APPROVAL_EXPIRES_IN_SECONDS_MAX,
      description: 'How long the approval waits before it expires (24 hours by default).',
    },
  },
} as const;

const listOf = (items: object, description: string) => ({
  type: 'array',
  minItems: 1,
  maxItems: POLICY_MATCH_VALUES_MAX,
  items,
  description,
});

const decimalText = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' } as const;

const matchSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Every matcher given must hold (AND); a matcher left out matches anything.',
  properties: {
    amount: listOf(
      {
        type: 'object',
        required: ['currency'],
        additionalProperties: false,
        properties: {
          currency: currencySchema,
          gte: { ...decimalText, description: 'At least this amount.' },
          lt: { ...decimalText, description: 'Below this amount.' },
        },
      },
      'Amount ranges, one per currency; a transfer in a currency not listed does not match.',
    ),
    rails: listOf(transferRailSchema, 'The transfer’s rail is one of these.'),
    destination_types: listOf(
      { type: 'string', enum: DESTINATION_TYPES },
      'The destination type is one of these.',
    ),
    risk_levels: listOf(
      { type: 'string', enum: RISK_LEVELS },
      'The paying customer’s risk level is one of these.',
    ),
    kyc_statuses: listOf(
      { type: 'string', enum: KYC_STATUSES },
      'The paying customer’s KYC status is one of these.',
    ),
    source_wallets: listOf(
      idSchema(ID_PREFIXES.wallet, 'A wallet id.'),
      'The paying wallet is one of these.',
    ),
    counterparty: {
      type: 'string',
      enum: ['new', 'known'],
      description: '`new`: the paying wallet never paid this destination before; `known`: it has.',
    },
    aggregate: {
      type: 'object',
      required: ['window_seconds'],
      additionalProperties: false,
      description:
        'The paying wallet’s outgoing transfers in the window, this one included, reach `count_at_least` or `sum_at_least` (in `currency`).',
      properties: {
        window_seconds: { type: 'integer', minimum: 1, maximum: POLICY_WINDOW_SECONDS_MAX },
        count_at_least: { type: 'integer', minimum: 1 },
        sum_at_least: decimalText,
        currency: currencySchema,
      },
    },
    kinds: listOf(
      { type: 'string', enum: GOVERNED_CHANGE_KINDS },
      'A `change` rule only: the kinds of change it governs (absent: every kind).',
    ),
  },
} as const;

export const policyRuleSchema = {
  $id: 'PolicyRule',
  type: 'object',
  description: 'One rule of a policy. Rules are tried in order; the first that matches decides.',
  required: ['id', 'action'],
  additionalProperties: false,
  properties: {
    id: {
      type: 'string',
      pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
      description: 'Unique in the policy; decisions name it.',
    },
    description: { type: ['string', 'null'], maxLength: POLICY_DESCRIPTION_CHARS_MAX },
    applies_to: {
      type: 'string',
      enum: POLICY_OPERATIONS,
      description:
        '`transfer` (the default), `payment_batch` (a batch as a whole: `amount` and `source_wallets` only), `loan` (a loan application: `amount` is the principal, `source_wallets` the borrower’s wallet, and `risk_levels`, `kyc_statuses`) `policy.update` (changes to the policy itself; such a rule takes no `match`) or `change` (governed changes: role grants, elevated keys, the policy, conversion rates, fee schedules, AML rules, digital-asset routes, rail partners, trust accounts, launch-gate overrides; matched by `kinds` only; see docs/APPROVALS.md).',
    },
    match: matchSchema,
    action: {
      type: 'string',
      enum: POLICY_ACTIONS,
      description:
        '`allow`; `deny` (422 `policy_denied` naming the rule); `require_approval` (the transfer waits `pending_approval` with its funds held).',
    },
    approval: approvalRequirementSchema,
  },
} as const;

const defaultRuleSchema = {
  type: 'object',
  required: ['action'],
  additionalProperties: false,
  description: 'What a transfer that no rule matches gets.',
  properties: {
    action: { type: 'string', enum: POLICY_ACTIONS },
    approval: approvalRequirementSchema,
  },
} as const;

export const policySchema = apiObjectSchema(
  'Policy',
  'policy',
  'An organization’s authorization policy at one version. Every change makes a new version; every decision names the version and rule that made it.',
  {
    version: { type: 'integer', minimum: 1 },
    rules: { type: 'array', items: { $ref: 'PolicyRule#' } },
    default: defaultRuleSchema,
    created_by: {
      type: 'string',
      description: 'The member or API key that wrote this version, or `system`.',
    },
    approval: nullableStringSchema('The approval that let this version in, when changes need one.'),
    created_at: timestampSchema,
  },
);

/** A rule as a request carries it: the PolicyRule schema inline (request validation resolves no shared $ref). */
const { $id: _ruleId, ...ruleBodySchema } = policyRuleSchema;

export const policyBodySchema = {
  type: 'object',
  required: ['rules'],
  additionalProperties: false,
  properties: {
    rules: { type: 'array', maxItems: POLICY_RULES_MAX, items: ruleBodySchema },
    default: defaultRuleSchema,
    base_version: {
      type: 'integer',
      minimum: 1,
      description:
        'The version this change was written against: if the policy has moved on, 409 `policy_version_conflict`.',
    },
  },
} as const;

export const policyChangeSchema = apiObjectSchema(
  'PolicyChange',
  'policy_change',
  'A policy change waiting for approval, because the current policy requires approval for `policy.update`. Applied as the next version once approved, unless the policy changed meanwhile (`superseded`).',
  {
    id: idSchema(ID_PREFIXES.policyChange, 'Policy change id.'),
    status: { type: 'string', enum: ['pending_approval', 'applied', 'rejected', 'expired', 'superseded'] },
    base_version: { type: 'integer' },
    applied_version: { type: ['integer', 'null'] },
    rules: { type: 'array', items: { $ref: 'PolicyRule#' } },
    default: defaultRuleSchema,
    approval: nullableStringSchema('Its approval.'),
    created_by: { type: 'string' },
    created_at: timestampSchema,
    decided_at: nullableTimestampSchema,
  },
);

export const approvalSchema = apiObjectSchema(
  'Approval',
  'approval',
  'A request for people to approve a resource (a transfer, a policy change), opened by a policy rule’s `require_approval`. Members vote once each, with a role the rule names; the initiator never votes. The quorum approves it, one rejection rejects it, and it expires at `expires_at`.',
  {
    id: idSchema(ID_PREFIXES.approval, 'Approval id.'),
    status: { type: 'string', enum: APPROVAL_STATUSES },
    resource: {
      type: 'object',
      required: ['type', 'id'],
      properties: { type: { type: 'string', enum: APPROVAL_RESOURCE_TYPES }, id: { type: 'string' } },
    },
    policy_version: { type: 'integer', description: 'The policy version whose rule asked for approval.' },
    rule: { type: 'string', description: 'That rule (`default` for the default rule).' },
    quorum: {
      type: 'object',
      required: ['required', 'roles', 'distinct_roles'],
      properties: {
        required: { type: 'integer', description: 'Approving votes needed.' },
        roles: { type: 'array', items: { type: 'string', enum: MEMBER_ROLES } },
        distinct_roles: { type: 'boolean' },
      },
    },
    votes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['member', 'email', 'role', 'decision', 'comment', 'created_at'],
        properties: {
          member: idSchema(ID_PREFIXES.member, 'The member who voted.'),
          email: { type: 'string' },
          role: { type: 'string', enum: MEMBER_ROLES, description: 'The role the vote counts for.' },
          decision: { type: 'string', enum: VOTE_DECISIONS },
          comment: { type: ['string', 'null'] },
          created_at: timestampSchema,
        },
      },
    },
    initiated_by: { type: 'string', description: 'The member (or API key) who asked: they cannot vote.' },
    expires_at: timestampSchema,
    created_at: timestampSchema,
    decided_at: nullableTimestampSchema,
  },
);

export const AUTHORIZATION_SCHEMAS = [
  memberSchema,
  policyRuleSchema,
  policySchema,
  policyChangeSchema,
  approvalSchema,
];
