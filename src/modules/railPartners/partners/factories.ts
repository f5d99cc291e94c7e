/**
 * Each rail partner's adapter, built from an organization's stored settings and opened credentials, calling
 * out through the outbound address guard (src/outbound/guard.ts) under the deployment's policy.
 */

import type { OutboundAddressPolicy } from '../../../domain/outboundAddresses.ts';
import { guardedFetch, type OutboundFetch } from '../../../outbound/guard.ts';
import type { PartnerRailFactory } from '../../../rails/partner.ts';
import type { RailPartnerName } from '../domain.ts';
import { fireblocksRail } from './fireblocks/rail.ts';
import type { FireblocksWebhookSignatures } from './fireblocks/webhookJwks.ts';
import { flutterwaveRail } from './flutterwave/rail.ts';
import { mpesaDarajaRail } from './mpesaDaraja/rail.ts';
import { mtnMomoRail } from './mtnMomo/rail.ts';

/**
 * How every adapter reaches its partner: the guarded fetch, each request recorded where the directory keeps
 * the call log (useCases/partnerCalls.ts), and the configured base URL.
 */
function partnerConnection(
  settings: Record<string, string>,
  addressPolicy: OutboundAddressPolicy,
  recordCalls: ((fetch: OutboundFetch) => OutboundFetch) | undefined,
): { fetch: OutboundFetch; baseUrl: string } {
  const fetch = guardedFetch(addressPolicy);
  return { fetch: recordCalls ? recordCalls(fetch) : fetch, baseUrl: settings.base_url ?? '' };
}

export const PARTNER_RAIL_FACTORIES: Readonly<Record<RailPartnerName, PartnerRailFactory>> = {
  mpesa_daraja: ({ settings, credentials, addressPolicy, payoutRequests, recordCalls }, callbacks) =>
    mpesaDarajaRail(
      {
        ...partnerConnection(settings, addressPolicy, recordCalls),
        shortCode: settings.short_code ?? '',
        initiatorName: settings.initiator_name ?? '',
        consumerKey: credentials.consumer_key ?? '',
        consumerSecret: credentials.consumer_secret ?? '',
        ...(credentials.security_credential ? { securityCredential: credentials.security_credential } : {}),
        ...(credentials.initiator_password ? { initiatorPassword: credentials.initiator_password } : {}),
        ...(settings.security_certificate ? { certificate: settings.security_certificate } : {}),
        passkey: credentials.passkey ?? '',
        ...(settings.stk_short_code ? { stkShortCode: settings.stk_short_code } : {}),
        ...(settings.stk_transaction_type
          ? {
              stkTransactionType: settings.stk_transaction_type as
                | 'CustomerPayBillOnline'
                | 'CustomerBuyGoodsOnline',
            }
          : {}),
        ...(settings.stk_party_b ? { stkPartyB: settings.stk_party_b } : {}),
        ...(settings.b2c_command_id
          ? {
              b2cCommandId: settings.b2c_command_id as
                | 'BusinessPayment'
                | 'SalaryPayment'
                | 'PromotionPayment',
            }
          : {}),
      },
      callbacks,
      payoutRequests,
    ),
  mtn_momo: ({ settings, credentials, addressPolicy, recordCalls }, callbacks) =>
    mtnMomoRail(
      {
        ...partnerConnection(settings, addressPolicy, recordCalls),
        targetEnvironment: settings.target_environment ?? '',
        apiUser: credentials.api_user ?? '',
        apiKey: credentials.api_key ?? '',
        collectionSubscriptionKey: credentials.collection_subscription_key ?? '',
        disbursementSubscriptionKey: credentials.disbursement_subscription_key ?? '',
      },
      callbacks,
    ),
  flutterwave: ({ settings, credentials, addressPolicy, recordCalls }, callbacks) =>
    flutterwaveRail(
      {
        ...partnerConnection(settings, addressPolicy, recordCalls),
        secretKey: credentials.secret_key ?? '',
        secretHash: credentials.secret_hash ?? '',
        ...(settings.sender_name && settings.sender_country && settings.sender_mobile_number
          ? {
              sender: {
                name: settings.sender_name,
                country: settings.sender_country,
                mobileNumber: settings.sender_mobile_number,
              },
            }
          : {}),
      },
      callbacks,
    ),
  fireblocks: ({ settings, credentials, addressPolicy, recordCalls }) =>
    fireblocksRail({
      ...partnerConnection(settings, addressPolicy, recordCalls),
      sourceVaultAccountId: settings.source_vault_account_id ?? '',
      webhookPublicKey: settings.webhook_public_key ?? '',
      webhookSignatures: (settings.webhook_signatures ?? 'v1') as FireblocksWebhookSignatures,
      ...(settings.webhook_jwks_url ? { webhookJwksUrl: settings.webhook_jwks_url } : {}),
      apiKey: credentials.api_key ?? '',
      privateKey: credentials.private_key ?? '',
    }),
};
