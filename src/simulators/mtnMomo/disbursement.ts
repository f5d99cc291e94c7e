/**
 * MTN MoMo's disbursement product: transfer (POST /disbursement/v1_0/transfer, and GET by X-Reference-Id),
 * which pays the payee.
 */
import { type MomoProductApi, productApi } from './state.ts';

export const DISBURSEMENT_API: MomoProductApi = productApi('disbursement', 'transfer', {
  partyKey: 'payee',
  partyNotFound: 'PAYEE_NOT_FOUND',
});
