/**
 * The partner simulators `mkoba serve` runs in the sandbox: M-Pesa Daraja and MTN MoMo as HTTP servers in
 * this process, each with the partner configuration (settings and credentials) that points an adapter at it.
 */
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  startDarajaSimulator,
} from './simulators/mpesaDaraja/index.ts';
import { startMomoSimulator } from './simulators/mtnMomo/index.ts';

/** A rail partner's configuration that reaches a simulator. */
export interface SimulatedPartnerConfig {
  partner: 'mpesa_daraja' | 'mtn_momo';
  settings: Record<string, string>;
  credentials: Record<string, string>;
}

export interface RunningPartnerSimulators {
  darajaUrl: string;
  momoUrl: string;
  /** Daraja's configuration, then MoMo's. */
  configs: SimulatedPartnerConfig[];
  stop(): Promise<void>;
}

/**
 * `publicUrl` is where the service's callbacks arrive: MoMo's API user is registered with its host, so a
 * callback URL on any other host is refused with INVALID_CALLBACK_URL_HOST, as MTN refuses one.
 */
export async function startPartnerSimulators(publicUrl?: string | null): Promise<RunningPartnerSimulators> {
  const daraja = await startDarajaSimulator();
  const callbackHost = publicUrl && URL.canParse(publicUrl) ? new URL(publicUrl).hostname : undefined;
  const momo = await startMomoSimulator(callbackHost ? { providerCallbackHost: callbackHost } : {});
  const stop = async () => {
    await daraja.close();
    await momo.close();
  };
  const configs: SimulatedPartnerConfig[] = [
    {
      partner: 'mpesa_daraja',
      settings: {
        base_url: daraja.url,
        short_code: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode,
        initiator_name: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
        stk_short_code: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.stkShortCode,
      },
      credentials: {
        consumer_key: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerKey,
        consumer_secret: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerSecret,
        security_credential: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.securityCredential,
        passkey: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.passkey,
      },
    },
    {
      partner: 'mtn_momo',
      settings: { base_url: momo.url, target_environment: momo.credentials.targetEnvironment },
      credentials: {
        api_user: momo.credentials.apiUser,
        api_key: momo.credentials.apiKey,
        collection_subscription_key: momo.credentials.collectionSubscriptionKey,
        disbursement_subscription_key: momo.credentials.disbursementSubscriptionKey,
      },
    },
  ];
  return { darajaUrl: daraja.url, momoUrl: momo.url, configs, stop };
}
