/**
 * What the call log (useCases/partnerCalls.ts) keeps of one HTTP request to a rail partner, read by each
 * partner's describer from the request and its answer: the operation, our idempotency key or reference, the
 * partner's reference and its short result code. Pure. Only values in REFERENCE_PATTERN's form are kept, so
 * a describer can never copy a name, free text, a token or a signature into the log; paths are masked
 * (maskedCallPath) and lose their query.
 */

import { isRecord } from '../../../domain/json.ts';
import { maskedPhone } from '../../../domain/transferRecord.ts';

/** The operations a call is recorded as (GET /v1/rail-partner-calls `operation`). */
export const RAIL_PARTNER_CALL_OPERATIONS = [
  'token',
  'payout_submit',
  'payout_status',
  'payout_lookup',
  'account_resolve',
  'account_holder_check',
  'collection_submit',
  'collection_status',
  'reversal_submit',
  'reversal_status',
  'transaction_verify',
  'balance_query',
  'register_urls',
  'virtual_account_create',
  'vault_lookup',
  'vault_create',
  'asset_wallet_create',
  'address_lookup',
  'sweep_submit',
  'sweep_status',
  'deposit_poll',
  'other',
] as const;
export type RailPartnerCallOperation = (typeof RAIL_PARTNER_CALL_OPERATIONS)[number];

/** An id, key, reference or code as partners and we write them; anything else (text, names) is not kept. */
const REFERENCE_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;
/** A path segment that may be a phone or account number: six digits or more, shown as a phone is. */
const PERSONAL_SEGMENT = /\d{6,}/;
/** An e-mail address in a path, hidden whole. */
const EMAIL_MASK = '•••';

/** The thing a call was made for, as the adapter's method was asked (useCases/partnerCalls.ts). */
export interface CallSubject {
  /** The adapter method the request was made in (`submit`, `check`, `sweep`, …). */
  adapterMethod?: string | undefined;
  transferId?: string | undefined;
  walletId?: string | undefined;
  sweepId?: string | undefined;
  collectionId?: string | undefined;
}

export interface PartnerCallRequest {
  method: string;
  /** Under the configured base URL, with its query. */
  path: string;
  headers: Readonly<Record<string, string>>;
  /** The JSON body, when it is an object. */
  body: Record<string, unknown> | undefined;
  subject: CallSubject;
}

export interface PartnerCallDescription {
  operation: RailPartnerCallOperation;
  ourReference: string | null;
}

export interface PartnerAnswerDescription {
  partnerReference: string | null;
  partnerCode: string | null;
}

export interface PartnerCallDescriber {
  request(request: PartnerCallRequest): PartnerCallDescription;
  answer(status: number, body: Record<string, unknown> | undefined): PartnerAnswerDescription;
}

/** A value kept only when it has the form of a reference or code. */
export function referenceOf(value: unknown): string | null {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  return typeof text === 'string' && REFERENCE_PATTERN.test(text) ? text : null;
}

function firstReference(...values: unknown[]): string | null {
  for (const value of values) {
    const reference = referenceOf(value);
    if (reference !== null) return reference;
  }
  return null;
}

/** The path without its query, each segment that may be personal masked as a phone number is. */
export function maskedCallPath(path: string): string {
  const bare = path.split('?')[0] ?? '';
  return bare
    .split('/')
    .map((segment) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        decoded = segment;
      }
      if (decoded.includes('@')) return EMAIL_MASK;
      return PERSONAL_SEGMENT.test(decoded) ? maskedPhone(decoded) : segment;
    })
    .join('/');
}

const bareOf = (path: string) => path.split('?')[0] ?? '';
const queryOf = (path: string) => new URLSearchParams(path.split('?')[1] ?? '');
const header = (request: PartnerCallRequest, name: string) =>
  Object.entries(request.headers).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
const described = (operation: RailPartnerCallOperation, ourReference: unknown = null) => ({
  operation,
  ourReference: referenceOf(ourReference),
});

const DARAJA_STATUS_OPERATIONS: Readonly<Record<string, RailPartnerCallOperation>> = {
  checkReversal: 'reversal_status',
  verifyCredit: 'transaction_verify',
};

const DARAJA_OPERATIONS: Readonly<Record<string, RailPartnerCallOperation>> = {
  '/oauth/v1/generate': 'token',
  '/mpesa/b2c/v3/paymentrequest': 'payout_submit',
  '/mpesa/b2b/v1/paymentrequest': 'payout_submit',
  '/mpesa/stkpush/v1/processrequest': 'collection_submit',
  '/mpesa/stkpushquery/v1/query': 'collection_status',
  '/mpesa/accountbalance/v1/query': 'balance_query',
  '/mpesa/c2b/v2/registerurl': 'register_urls',
  '/mpesa/reversal/v1/request': 'reversal_submit',
};

const darajaDescriber: PartnerCallDescriber = {
  request(request) {
    const path = bareOf(request.path);
    const body = request.body ?? {};
    const ours = firstReference(body.OriginatorConversationID, body.OriginalConversationID, body.Occasion);
    if (path === '/mpesa/transactionstatus/v1/query') {
      const method = request.subject.adapterMethod ?? '';
      return described(DARAJA_STATUS_OPERATIONS[method] ?? 'payout_status', ours);
    }
    return described(DARAJA_OPERATIONS[path] ?? 'other', ours);
  },
  answer: (_status, body = {}) => ({
    partnerReference: firstReference(body.ConversationID, body.CheckoutRequestID),
    partnerCode: firstReference(body.ResponseCode, body.errorCode, body.ResultCode),
  }),
};

const momoDescriber: PartnerCallDescriber = {
  request(request) {
    const path = bareOf(request.path);
    const post = request.method === 'POST';
    const [, product, , resource, id] = path.split('/');
    if (/^\/(collection|disbursement)\/token\/?$/.test(path)) return described('token');
    if (path.includes('/accountholder/')) return described('account_holder_check');
    if (path.endsWith('/account/balance')) return described('balance_query');
    if (resource === 'transfer' || resource === 'requesttopay') {
      const kind = product === 'disbursement' ? 'payout' : 'collection';
      return post
        ? described(`${kind}_submit`, header(request, 'X-Reference-Id'))
        : described(`${kind}_status`, id);
    }
    return described('other');
  },
  answer: (_status, body = {}) => ({
    partnerReference: firstReference(body.financialTransactionId),
    partnerCode: firstReference(body.status, body.code),
  }),
};

const flutterwaveDescriber: PartnerCallDescriber = {
  request(request) {
    const path = bareOf(request.path);
    const body = request.body ?? {};
    if (path === '/v3/accounts/resolve') return described('account_resolve');
    if (path === '/v3/virtual-account-numbers') return described('virtual_account_create', body.tx_ref);
    if (path === '/v3/transfers') {
      return request.method === 'POST'
        ? described('payout_submit', body.reference)
        : described('payout_lookup', queryOf(request.path).get('reference'));
    }
    if (path.startsWith('/v3/transfers/')) return described('payout_status');
    if (/^\/v3\/transactions\/[^/]+\/verify$/.test(path)) return described('transaction_verify');
    return described('other');
  },
  answer(_status, body = {}) {
    const data = isRecord(body.data) ? body.data : Array.isArray(body.data) ? body.data[0] : undefined;
    const record = isRecord(data) ? data : {};
    return {
      partnerReference: firstReference(record.id, record.flw_ref, record.order_ref),
      partnerCode: firstReference(record.status, body.status),
    };
  },
};

const fireblocksDescriber: PartnerCallDescriber = {
  request(request) {
    const path = bareOf(request.path);
    const sweep = request.subject.sweepId !== undefined;
    const key = header(request, 'Idempotency-Key');
    if (path === '/vault/accounts_paged') return described('vault_lookup');
    if (path === '/vault/accounts') return described('vault_create', key);
    if (/^\/vault\/accounts\/[^/]+\/[^/]+\/addresses_paginated$/.test(path))
      return described('address_lookup');
    if (/^\/vault\/accounts\/[^/]+\/[^/]+$/.test(path)) return described('asset_wallet_create', key);
    if (path === '/transactions') {
      return request.method === 'POST'
        ? described(sweep ? 'sweep_submit' : 'payout_submit', request.body?.externalTxId)
        : described('deposit_poll');
    }
    const lookup = /^\/transactions\/external_tx_id\/([^/]+)$/.exec(path);
    if (lookup) {
      const submitting = ['submit', 'sweep'].includes(request.subject.adapterMethod ?? '');
      const operation = sweep ? 'sweep_status' : submitting ? 'payout_lookup' : 'payout_status';
      return described(operation, decodeURIComponent(lookup[1] ?? ''));
    }
    return described('other');
  },
  answer: (_status, body = {}) => ({
    partnerReference: firstReference(body.id),
    partnerCode: firstReference(body.status, body.code),
  }),
};

/** Each rail partner's describer, by the partner's name. */
export const PARTNER_CALL_DESCRIBERS: Readonly<Record<string, PartnerCallDescriber>> = {
  mpesa_daraja: darajaDescriber,
  mtn_momo: momoDescriber,
  flutterwave: flutterwaveDescriber,
  fireblocks: fireblocksDescriber,
};
