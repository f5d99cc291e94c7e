/**
 * MTN MoMo's disbursement product: transfer (POST /disbursement/v1_0/transfer, and GET by X-Reference-Id),
 * which pays the payee.
 */
import type { MomoProductApi } from './state.ts';

export const DISBURSEMENT_API: MomoProductApi = {
  product: 'disbursement',
  partyKey: 'payee',
  partyNotFound: 'PAYEE_NOT_FOUND',
  routes: [
    { pattern: /^\/(disbursement)\/v1_0\/transfer$/, method: 'POST', action: 'create' },
    { pattern: /^\/(disbursement)\/v1_0\/transfer\/([^/]+)$/, method: 'GET', action: 'read' },
  ],
};
