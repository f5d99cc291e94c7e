/**
 * The rail partners module's wire format (a partner's configuration, a callback a partner sent), and who may
 * use its routes.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { accessByScope } from '../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  idParamsSchema,
  idSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
  transferRailSchema,
} from '../../../http/schemas.ts';
import {
  RAIL_CALLBACK_STATUSES,
  RAIL_PARTNER_SHAPES,
  RAIL_PARTNER_STATUSES,
  RAIL_PARTNERS,
} from '../domain.ts';

export const TAGS = ['Rail partners'];
/** Admins configure the partners and ask them; operators (`compliance`) read what came and went. */
export const ACCESS = accessByScope(TAGS);
/** The path parameter naming one partner configuration. */
export const railPartnerParams = idParamsSchema(ID_PREFIXES.railPartner, 'Rail partner id.');

const partnerFieldsDescription = Object.entries(RAIL_PARTNER_SHAPES)
  .map(
    ([name, shape]) =>
      `\`${name}\` (${shape.rail}${shape.network ? `, ${shape.network}` : ''}): settings ${shape.settings.map((s) => `\`${s}\``).join(', ')}; credentials ${shape.credentials.map((c) => `\`${c}\``).join(', ')}`,
  )
  .join('. ');

export const railPartnerSchema = apiObjectSchema(
  'RailPartner',
  'rail_partner',
  `A partner that carries a rail (and mobile-money network) for the organization. ${partnerFieldsDescription}.`,
  {
    id: idSchema(ID_PREFIXES.railPartner, 'Rail partner id.'),
    partner: { type: 'string', enum: RAIL_PARTNERS },
    rail: transferRailSchema,
    network: { type: ['string', 'null'] },
    status: { type: 'string', enum: RAIL_PARTNER_STATUSES },
    settings: { type: 'object', additionalProperties: { type: 'string' } },
    credentials: {
      type: 'array',
      items: { type: 'string' },
      description:
        'The names of the credentials held. Their values are sealed at rest and never shown again.',
    },
    callback_url: nullableStringSchema(
      'Where the partner calls back (register it with the partner where it asks); its last segment is an unguessable token. Null without MKOBA_PUBLIC_URL.',
    ),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
);

export const railCallbackSchema = apiObjectSchema(
  'RailCallback',
  'rail_callback',
  'A callback a partner sent, stored as it arrived before it was acknowledged, and what applying it made of it.',
  {
    id: idSchema(ID_PREFIXES.railCallback, 'Callback id.'),
    rail_partner: idSchema(ID_PREFIXES.railPartner, 'The configuration whose address it came to.'),
    partner: { type: 'string' },
    path: { type: 'string' },
    status: {
      type: 'string',
      enum: RAIL_CALLBACK_STATUSES,
      description:
        '`received` (to be applied), `applied`, `duplicate` (the same bytes came before), `unchanged` (agreed with what was recorded), `ignored`, `malformed`, `exception` (sent to the reconciliation exception queue).',
    },
    transfer: { type: ['string', 'null'] },
    detail: { type: ['string', 'null'] },
    body: { type: 'string', description: 'The body exactly as it arrived.' },
    received_at: timestampSchema,
    processed_at: nullableTimestampSchema,
  },
);

export const railPartnerCreditUrlsSchema = apiObjectSchema(
  'RailPartnerCreditUrls',
  'rail_partner_credit_urls',
  'What a partner was told about payers’ own payments (M-Pesa C2B): the account payers pay, where the partner asks before a payment completes and where it confirms one, and what it does with a payment when the validation address does not answer.',
  {
    rail_partner: idSchema(ID_PREFIXES.railPartner, 'The configuration registered.'),
    partner: { type: 'string', enum: RAIL_PARTNERS },
    account: {
      type: 'string',
      description: 'The partner’s account payers pay (M-Pesa: the paybill or till).',
    },
    validation_url: { type: 'string' },
    confirmation_url: { type: 'string' },
    when_unanswered: {
      type: 'string',
      enum: ['Completed', 'Cancelled'],
      description:
        'M-Pesa’s ResponseType: `Completed` lets a payment through when validation does not answer.',
    },
    registered_at: timestampSchema,
  },
);
