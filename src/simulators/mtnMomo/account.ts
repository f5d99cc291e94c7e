/**
 * MTN MoMo's account APIs, the same under each product: the account's balance (GET
 * /{product}/v1_0/account/balance) and whether an account holder is active (GET
 * /{product}/v1_0/accountholder/{accountHolderIdType}/{accountHolderId}/active), with MTN's sandbox test
 * account holders answering as its Sandbox Use Cases page names them.
 */
import { accountHolderCaseOf, MOMO_SIMULATOR_NUMBERS } from './numbers.ts';
import {
  type Answer,
  ERROR_BODY_OF_STATUS,
  type MomoProduct,
  type MomoRoute,
  type MomoState,
} from './state.ts';
import { MOMO_PARTY_ID_TYPES } from './validation.ts';

export const ACCOUNT_ROUTES: MomoRoute[] = [
  { pattern: /^\/(collection|disbursement)\/v1_0\/account\/balance$/, method: 'GET', action: 'balance' },
  {
    pattern: /^\/(collection|disbursement)\/v1_0\/accountholder\/([^/]+)\/([^/]+)\/active$/,
    method: 'GET',
    action: 'active',
  },
];

/** GET /{product}/v1_0/account/balance: the product account's available balance, in its currency. */
export function readBalance(state: MomoState, product: MomoProduct): Answer {
  return {
    status: 200,
    body: { availableBalance: state.balances[product], currency: state.balanceCurrency },
  };
}

/**
 * GET /{product}/v1_0/accountholder/{accountHolderIdType}/{accountHolderId}/active: `{result}`. The id type
 * is a party type (msisdn, email, party_code, in any case); an id not in its type's form is a 400. MTN's sandbox test account holders answer as named: not found or not active is
 * `{result: false}`, the others MTN's error.
 */
export function readAccountHolderActive(idType: string, id: string): Answer {
  // The reference lists the types in small letters; capitals (`MSISDN`, which public clients send) are taken too.
  const partyIdType = idType.toUpperCase();
  const valid = Object.hasOwn(MOMO_PARTY_ID_TYPES, partyIdType);
  if (!valid || !MOMO_PARTY_ID_TYPES[partyIdType]?.(id)) {
    return {
      status: 400,
      body: { message: 'accountHolderIdType must be msisdn, email or party_code, with an id of that type.' },
    };
  }
  const sandboxCase = accountHolderCaseOf(partyIdType, id);
  if (sandboxCase === undefined) {
    const ours = partyIdType === 'MSISDN' ? MOMO_SIMULATOR_NUMBERS[`+${id}`] : undefined;
    return { status: 200, body: { result: ours?.active !== false } };
  }
  switch (sandboxCase) {
    case 'NotFound':
    case 'NotActive':
      return { status: 200, body: { result: false } };
    case 'NotAllowed':
      return { status: 500, body: { code: 'NOT_ALLOWED', message: 'Authorization failed.' } };
    case 'NotAllowedTargetEnvironment':
      return {
        status: 500,
        body: {
          code: 'NOT_ALLOWED_TARGET_ENVIRONMENT',
          message: 'Access to target environment is forbidden.',
        },
      };
    case 'InternalProcessingError':
      return { status: 500, body: ERROR_BODY_OF_STATUS[500] };
    case 'ServiceUnavailable':
      return { status: 503, body: ERROR_BODY_OF_STATUS[503] };
  }
}
