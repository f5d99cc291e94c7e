/**
 * GET /v1/rail-partner-calls: every HTTP request Mkoba sent to the organization's rail partners, one by one,
 * for operators and auditors (the `compliance` scope, as `/v1/verification-provider-calls` and
 * `/v1/rail-callbacks`).
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { ListQuery } from '../../../http/presenters.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import { enumFilter, listRoute, pagedList } from '../../../http/readRoutes.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  idSchema,
  nullableIdSchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import type { RailPartnerCallOperation } from '../partners/callDescriptions.ts';
import {
  listOrganizationRailPartnerCalls,
  RAIL_PARTNER_CALL_OPERATIONS,
  RAIL_PARTNER_CALL_STATUSES,
  type RailPartnerCallRecord,
} from '../useCases/partnerCalls.ts';
import { ACCESS } from './schemas.ts';

const nullableText = (description: string) => ({ type: ['string', 'null'], description });

export const railPartnerCallSchema = apiObjectSchema(
  'RailPartnerCall',
  'rail_partner_call',
  'One HTTP request Mkoba sent to a rail partner, recorded as `sent` before it left and completed with its answer: which configuration, which operation, what it was for, our reference and the partner’s, the HTTP status or why none came, and how long it took. A call left `sent` got no recorded answer (the process stopped while it was in flight). Never a body, header, token, key, signature, phone number or name.',
  {
    id: idSchema(ID_PREFIXES.railPartnerCall, 'Call id.'),
    rail_partner: idSchema(ID_PREFIXES.railPartner, 'The partner configuration the request was sent under.'),
    partner: { type: 'string', description: '`mpesa_daraja`, `mtn_momo`, `flutterwave`, `fireblocks`.' },
    operation: { type: 'string', enum: RAIL_PARTNER_CALL_OPERATIONS },
    method: { type: 'string', enum: ['GET', 'POST'] },
    path: {
      type: 'string',
      description:
        'The path under the configuration’s `base_url`, without its query; a segment that could be a phone or account number is masked.',
    },
    transfer: nullableIdSchema(ID_PREFIXES.transfer, 'The transfer the request was about.'),
    wallet: nullableIdSchema(
      ID_PREFIXES.wallet,
      'The wallet the request was about (a vault, an account number).',
    ),
    sweep: nullableIdSchema(ID_PREFIXES.custodySweep, 'The custody sweep the request was about.'),
    collection: nullableIdSchema(ID_PREFIXES.collection, 'The collection the request was about.'),
    our_reference: nullableText('Our idempotency key or reference as the request carried it.'),
    partner_reference: nullableText(
      'The partner’s id in its answer (a conversation, transfer or transaction id).',
    ),
    status: {
      type: 'string',
      enum: RAIL_PARTNER_CALL_STATUSES,
      description:
        '`answered` (any HTTP status), `timeout`, `failed` (no connection, or an address the deployment may not call), or `sent` (no answer recorded).',
    },
    http_status: { type: ['integer', 'null'] },
    partner_code: nullableText('The partner’s short result or error code, never its text.'),
    failure: nullableText('`timeout`, `no_connection` or `blocked_address` when no answer came.'),
    duration_ms: { type: ['integer', 'null'], description: 'How long the request took; null while `sent`.' },
    created_at: timestampSchema,
    answered_at: nullableTimestampSchema,
  },
);

function presentCall(call: RailPartnerCallRecord) {
  return {
    object: 'rail_partner_call',
    id: call.id,
    rail_partner: call.railPartnerId,
    partner: call.partner,
    operation: call.operation,
    method: call.method,
    path: call.path,
    transfer: call.transferId,
    wallet: call.walletId,
    sweep: call.sweepId,
    collection: call.collectionId,
    our_reference: call.ourReference,
    partner_reference: call.partnerReference,
    status: call.status,
    http_status: call.httpStatus,
    partner_code: call.partnerCode,
    failure: call.failure,
    duration_ms: call.durationMs,
    created_at: call.createdAt.toISOString(),
    answered_at: isoOrNull(call.answeredAt),
  };
}

type CallsQuery = ListQuery & {
  rail_partner_id?: string;
  transfer_id?: string;
  operation?: RailPartnerCallOperation;
  status?: RailPartnerCallRecord['status'];
};

export function railPartnerCallRoutes(app: FastifyInstance, deps: Deps): void {
  listRoute(app, deps, {
    path: '/v1/rail-partner-calls',
    access: ACCESS.compliance,
    present: presentCall,
    list: {
      operationId: 'listRailPartnerCalls',
      summary: 'List rail partner calls',
      description:
        'Newest first: every HTTP request Mkoba sent to the organization’s rail partners (tokens, payouts and their status checks, account resolution, virtual accounts, verifications, vaults and addresses, sweeps, deposit polls, balance queries), one by one, without bodies, secrets or personal data. For operators (the `compliance` scope), as `GET /v1/rail-callbacks` is for what partners sent back.',
      ...pagedList('RailPartnerCall', 'A page of calls.', ID_PREFIXES.railPartnerCall, {
        rail_partner_id: idSchema(ID_PREFIXES.railPartner, 'Only calls under this partner configuration.'),
        transfer_id: idSchema(ID_PREFIXES.transfer, 'Only calls about this transfer.'),
        operation: enumFilter(RAIL_PARTNER_CALL_OPERATIONS, 'Only calls of this operation.'),
        status: enumFilter(RAIL_PARTNER_CALL_STATUSES, 'Only calls in this status.'),
      }),
    },
    page: listOrganizationRailPartnerCalls,
    filtersOf: (query: CallsQuery) => ({
      railPartnerId: query.rail_partner_id,
      transferId: query.transfer_id,
      operation: query.operation,
      status: query.status,
    }),
  });
}
