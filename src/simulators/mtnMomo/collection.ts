/**
 * MTN MoMo's collection product: request-to-pay (POST /collection/v1_0/requesttopay, and GET by
 * X-Reference-Id), which asks the payer to approve a payment.
 */
import type { MomoProductApi } from './state.ts';

export const COLLECTION_API: MomoProductApi = {
  product: 'collection',
  partyKey: 'payer',
  partyNotFound: 'PAYER_NOT_FOUND',
  routes: [
    { pattern: /^\/(collection)\/v1_0\/requesttopay$/, method: 'POST', action: 'create' },
    { pattern: /^\/(collection)\/v1_0\/requesttopay\/([^/]+)$/, method: 'GET', action: 'read' },
  ],
};
