/**
 * MTN MoMo's collection product: request-to-pay (POST /collection/v1_0/requesttopay, and GET by
 * X-Reference-Id), which asks the payer to approve a payment.
 */
import { type MomoProductApi, productApi } from './state.ts';

export const COLLECTION_API: MomoProductApi = productApi('collection', 'requesttopay', {
  partyKey: 'payer',
  partyNotFound: 'PAYER_NOT_FOUND',
});
