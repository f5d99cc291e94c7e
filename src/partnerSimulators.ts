/**
 * The partner simulators `mkoba serve` runs in the sandbox: M-Pesa Daraja and MTN MoMo as HTTP servers in
 * this process, each with the partner configuration (settings and credentials) that points an adapter at it.
 */
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  startDarajaSimulator,
} from './simulators/mpesaDaraja/index.ts';
import { type MomoSimulator, startMomoSimulator } from './simulators/mtnMomo/index.ts';

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
  const configs = [darajaSimulatorPartner(daraja.url), momoSimulatorPartner(momo)];
  return { darajaUrl: daraja.url, momoUrl: momo.url, configs, stop };
}

/** The Daraja configuration that points an adapter at a Daraja simulator (its default credentials). */
export function darajaSimulatorPartner(url: string): SimulatedPartnerConfig {
  return {
    partner: 'mpesa_daraja',
    settings: {
      base_url: url,
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
  };
}

/** The MoMo configuration that points an adapter at a MoMo simulator (its credentials). */
export function momoSimulatorPartner(momo: {
  url: string;
  credentials: MomoSimulator['credentials'];
}): SimulatedPartnerConfig {
  return {
    partner: 'mtn_momo',
    settings: { base_url: momo.url, target_environment: momo.credentials.targetEnvironment },
    credentials: {
      api_user: momo.credentials.apiUser,
      api_key: momo.credentials.apiKey,
      collection_subscription_key: momo.credentials.collectionSubscriptionKey,
      disbursement_subscription_key: momo.credentials.disbursementSubscriptionKey,
    },
  };
}
