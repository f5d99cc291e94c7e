/**
 * What the MoMo simulator does with a request, by the number it names (the payer of a request-to-pay, the
 * payee of a transfer): the behaviours and the magic numbers (MOMO_SIMULATOR_NUMBERS).
 */
import type { MomoProduct } from './state.ts';

/**
 * What happens to a request, by the number it names. `fail` carries MTN's reason per product; a product
 * without one succeeds (APPROVAL_REJECTED and EXPIRED exist only for request-to-pay).
 */
export type MomoSimulatorBehaviour =
  /** PENDING, then SUCCESSFUL after MOMO_SIMULATOR_PROCESSING_MS, one callback. */
  | { kind: 'succeed' }
  /** PENDING, then FAILED with MTN's reason, one callback. */
  | { kind: 'fail'; reasons: Partial<Record<MomoProduct, string>> }
  /** PENDING for ever, no callback: the payer never answers, the platform never decides. */
  | { kind: 'stay_pending' }
  /** PENDING for the simulator's delayedSettlementMs, then SUCCESSFUL, one callback. */
  | { kind: 'succeed_after_delay' }
  /** SUCCESSFUL, and the same callback sent twice. */
  | { kind: 'duplicate_callback' }
  /** SUCCESSFUL (GET says so at once), the callback only lateCallbackDelayMs later. */
  | { kind: 'late_callback' }
  /** SUCCESSFUL; the callback's body is cut short, not MTN's shape. */
  | { kind: 'malformed_callback' }
  /** SUCCESSFUL; no callback is ever sent, only GET tells. */
  | { kind: 'no_callback' }
  /** The POST is answered with this status and MTN's error body; nothing is created. */
  | { kind: 'server_error'; status: 500 | 503 }
  /** The POST is never answered (the connection stays open until the client gives up). */
  | { kind: 'hang' }
  /**
   * The POST is refused at once with HTTP 500 and the reason (as MTN's error table lists for transfers);
   * nothing is created. A product without a reason succeeds.
   */
  | { kind: 'refuse_on_post'; reasons: Partial<Record<MomoProduct, string>> };

export interface MomoSimulatorNumber {
  behaviour: MomoSimulatorBehaviour;
  /** false: the account-holder-active check answers `{result: false}` for it (true unless said). */
  active?: false;
  /** The SANDBOX_PHONE_BEHAVIOURS number whose outcome this one mirrors on an MTN (Uganda) number. */
  mirrors?: string;
}

/**
 * Magic MSISDNs (E.164, as our transfers carry them; MTN's partyId is the same digits without `+`). Any
 * other number made of 8 to 15 digits succeeds.
 */
export const MOMO_SIMULATOR_NUMBERS: Readonly<Record<string, MomoSimulatorNumber>> = {
  '+256770000000': { behaviour: { kind: 'succeed' }, mirrors: '+254700000000' },
  '+256770000001': {
    behaviour: { kind: 'fail', reasons: { disbursement: 'PAYEE_NOT_FOUND', collection: 'PAYER_NOT_FOUND' } },
    mirrors: '+254700000001',
  },
  '+256770000002': {
    behaviour: {
      kind: 'fail',
      reasons: { disbursement: 'NOT_ENOUGH_FUNDS', collection: 'NOT_ENOUGH_FUNDS' },
    },
    mirrors: '+254700000002',
  },
  '+256770000003': { behaviour: { kind: 'stay_pending' }, mirrors: '+254700000003' },
  '+256770000004': { behaviour: { kind: 'succeed_after_delay' }, mirrors: '+254700000004' },
  '+256770000005': {
    behaviour: {
      kind: 'fail',
      reasons: { disbursement: 'PAYER_LIMIT_REACHED', collection: 'PAYER_LIMIT_REACHED' },
    },
    mirrors: '+254700000005',
  },
  '+256770000006': { behaviour: { kind: 'duplicate_callback' } },
  '+256770000007': { behaviour: { kind: 'late_callback' } },
  '+256770000008': { behaviour: { kind: 'malformed_callback' } },
  '+256770000009': { behaviour: { kind: 'no_callback' } },
  '+256770000010': { behaviour: { kind: 'server_error', status: 500 } },
  '+256770000011': { behaviour: { kind: 'server_error', status: 503 } },
  '+256770000012': { behaviour: { kind: 'hang' } },
  '+256770000013': { behaviour: { kind: 'fail', reasons: { collection: 'APPROVAL_REJECTED' } } },
  '+256770000014': { behaviour: { kind: 'fail', reasons: { collection: 'EXPIRED' } } },
  '+256770000015': {
    behaviour: {
      kind: 'refuse_on_post',
      reasons: { disbursement: 'PAYEE_NOT_FOUND', collection: 'PAYER_NOT_FOUND' },
    },
  },
  '+256770000016': {
    behaviour: {
      kind: 'fail',
      reasons: { disbursement: 'PAYEE_NOT_ALLOWED_TO_RECEIVE', collection: 'PAYER_NOT_FOUND' },
    },
    active: false,
  },
};

/** What MTN's sandbox answers an account-holder-active check about one of its test account holders. */
export type MomoAccountHolderCase =
  | 'NotFound'
  | 'NotActive'
  | 'NotAllowed'
  | 'NotAllowedTargetEnvironment'
  | 'InternalProcessingError'
  | 'ServiceUnavailable';

/**
 * MTN's sandbox test account holders (its Sandbox Use Cases page, AccountHolderActive…), by party type and
 * id, as the page lists them.
 */
export const MOMO_SANDBOX_ACCOUNT_HOLDERS: Readonly<
  Record<'MSISDN' | 'EMAIL' | 'PARTY_CODE', Readonly<Record<string, MomoAccountHolderCase>>>
> = {
  MSISDN: {
    '46733123450': 'NotFound',
    '46733123451': 'NotActive',
    '46733123452': 'NotAllowed',
    '46733123453': 'NotAllowedTargetEnvironment',
    '46733123454': 'InternalProcessingError',
    '46733123455': 'ServiceUnavailable',
  },
  EMAIL: {
    'notfound@email.com': 'NotFound',
    'notactive@email.com': 'NotActive',
    'notallowed@email.com': 'NotAllowed',
    'notallowedtargetenvironment@email.com': 'NotAllowedTargetEnvironment',
    'internalprocessingerror@email.com': 'InternalProcessingError',
    'serviceunavailable@email.com': 'ServiceUnavailable',
  },
  PARTY_CODE: {
    '5cecb5a7-8bd0-4f49-87b1-8eb9ecc7b7bc': 'NotFound',
    'b0040b3c-b426-4a90-af6e-673e65861cd7': 'NotActive',
    '4d5f500f-c385-4901-9be5-25b6d36ad220': 'NotAllowed',
    'd2265f9b-0c22-496d-908f-79a65ad66266': 'NotAllowedTargetEnvironment',
    '8f548a78-ceb8-4d12-a243-5640b91e91a4': 'InternalProcessingError',
    '585c07a4-2c80-42f7-9e73-e586b36dee68': 'ServiceUnavailable',
  },
};

/** The sandbox case of an account holder, or undefined for one MTN's page does not list. */
export function accountHolderCaseOf(partyIdType: string, id: string): MomoAccountHolderCase | undefined {
  const table = Object.hasOwn(MOMO_SANDBOX_ACCOUNT_HOLDERS, partyIdType)
    ? MOMO_SANDBOX_ACCOUNT_HOLDERS[partyIdType as keyof typeof MOMO_SANDBOX_ACCOUNT_HOLDERS]
    : undefined;
  const key = partyIdType === 'EMAIL' ? id.toLowerCase() : id;
  return table !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** A sandbox test number that fails with MTN's reason for each product (payer / payee). */
const failing = (collection: string, disbursement: string): MomoSimulatorBehaviour => ({
  kind: 'fail',
  reasons: { collection, disbursement },
});

/**
 * MTN's own sandbox test numbers (its Sandbox Use Cases page: RequestToPayPayer… for a request-to-pay's payer,
 * TransferPayee… for a transfer's payee), by partyId. The page names each case, not its answer: a named
 * reason is the FAILED request's `reason`, Ongoing stays PENDING, Delayed settles after delayedSettlementMs.
 * "Any other number results in Success."
 */
export const MOMO_SANDBOX_NUMBERS: Readonly<Record<string, MomoSimulatorBehaviour>> = {
  '46733123450': failing('INTERNAL_PROCESSING_ERROR', 'INTERNAL_PROCESSING_ERROR'), // …Failed
  '46733123451': failing('APPROVAL_REJECTED', 'APPROVAL_REJECTED'), // …Rejected
  '46733123452': failing('EXPIRED', 'EXPIRED'), // …Expired
  '46733123453': { kind: 'stay_pending' }, // …Ongoing
  '46733123454': { kind: 'succeed_after_delay' }, // …Delayed
  '46733123455': failing('PAYER_NOT_FOUND', 'NOT_ENOUGH_FUNDS'),
  '46733123456': failing('PAYEE_NOT_ALLOWED_TO_RECEIVE', 'PAYER_LIMIT_REACHED'),
  '46733123457': failing('NOT_ALLOWED', 'PAYEE_NOT_FOUND'),
  '46733123458': failing('NOT_ALLOWED_TARGET_ENVIRONMENT', 'NOT_ALLOWED'),
  '46733123459': failing('INVALID_CALLBACK_URL_HOST', 'NOT_ALLOWED_TARGET_ENVIRONMENT'),
  '46733123460': failing('INVALID_CURRENCY', 'INVALID_CALLBACK_URL_HOST'),
  '46733123461': failing('INTERNAL_PROCESSING_ERROR', 'INVALID_CURRENCY'),
  '46733123462': failing('SERVICE_UNAVAILABLE', 'INTERNAL_PROCESSING_ERROR'),
  '46733123463': failing('COULD_NOT_PERFORM_TRANSACTION', 'SERVICE_UNAVAILABLE'),
};

/** The behaviour for an MTN partyId (no `+`): ours, then MTN's sandbox numbers; any other number succeeds. */
export function behaviourOf(partyId: string | undefined): MomoSimulatorBehaviour {
  const sandbox =
    partyId !== undefined && Object.hasOwn(MOMO_SANDBOX_NUMBERS, partyId)
      ? MOMO_SANDBOX_NUMBERS[partyId]
      : undefined;
  return MOMO_SIMULATOR_NUMBERS[`+${partyId}`]?.behaviour ?? sandbox ?? { kind: 'succeed' };
}
