/**
 * The partner simulators `mkoba serve` runs in the sandbox: M-Pesa Daraja, MTN MoMo, Flutterwave and
 * Fireblocks as HTTP servers in this process, each with the partner configuration (settings and
 * credentials) that points an adapter at it, and where each sends its webhooks once the configuration's
 * callback address is known.
 */
import {
  FIREBLOCKS_SIMULATOR_ASSETS,
  type FireblocksSimulator,
  startFireblocksSimulator,
} from './simulators/fireblocks/index.ts';
import { type FlutterwaveSimulator, startFlutterwaveSimulator } from './simulators/flutterwave/index.ts';
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  startDarajaSimulator,
} from './simulators/mpesaDaraja/index.ts';
import { type MomoSimulator, startMomoSimulator } from './simulators/mtnMomo/index.ts';

/** A rail partner's configuration that reaches a simulator. */
export interface SimulatedPartnerConfig {
  partner: 'mpesa_daraja' | 'mtn_momo' | 'flutterwave' | 'fireblocks';
  settings: Record<string, string>;
  credentials: Record<string, string>;
}

export interface RunningPartnerSimulators {
  darajaUrl: string;
  momoUrl: string;
  flutterwaveUrl: string;
  /** Fireblocks' base URL (with its `/v1`). */
  fireblocksUrl: string;
  /** The Fireblocks vault account payouts are sent from (funded: FIREBLOCKS_SANDBOX_TREASURY). */
  fireblocksSourceVaultId: string;
  /** The simulators the sandbox feeds (a bank transfer into a virtual account, a deposit on chain). */
  flutterwave: FlutterwaveSimulator;
  fireblocks: FireblocksSimulator;
  /** Daraja's configuration, then MoMo's, Flutterwave's and Fireblocks'. */
  configs: SimulatedPartnerConfig[];
  /**
   * Where a simulator that sends webhooks to one dashboard address (Flutterwave, Fireblocks) sends them,
   * given its configuration's `callback_url`; Daraja and MoMo take theirs with each request.
   */
  deliverWebhooksTo(partner: SimulatedPartnerConfig['partner'], callbackUrl: string): void;
  stop(): Promise<void>;
}

/** What the sandbox's Fireblocks source vault holds of each asset the simulator knows, in whole units. */
export const FIREBLOCKS_SANDBOX_TREASURY = '10000000';

/** Every asset the Fireblocks simulator knows (its asset ids): the sandbox's treasury holds each. */
export const FIREBLOCKS_SANDBOX_ASSET_IDS = Object.keys(FIREBLOCKS_SIMULATOR_ASSETS);

/**
 * `publicUrl` is where the service's callbacks arrive: MoMo's API user is registered with its host, so a
 * callback URL on any other host is refused with INVALID_CALLBACK_URL_HOST, as MTN refuses one.
 * `openSourceVault` opens and funds the Fireblocks vault account payouts are sent from (through Fireblocks'
 * own API, which the adapter's module signs for).
 */
export async function startPartnerSimulators(
  publicUrl: string | null | undefined,
  openSourceVault: (fireblocks: FireblocksSimulator) => Promise<string>,
): Promise<RunningPartnerSimulators> {
  const daraja = await startDarajaSimulator();
  const callbackHost = publicUrl && URL.canParse(publicUrl) ? new URL(publicUrl).hostname : undefined;
  const momo = await startMomoSimulator(callbackHost ? { providerCallbackHost: callbackHost } : {});
  const flutterwave = await startFlutterwaveSimulator();
  const fireblocks = await startFireblocksSimulator();
  const stop = async () => {
    await daraja.close();
    await momo.close();
    await flutterwave.close();
    await fireblocks.close();
  };
  let sourceVaultId: string;
  try {
    sourceVaultId = await openSourceVault(fireblocks);
  } catch (error) {
    await stop();
    throw error;
  }
  const configs = [
    darajaSimulatorPartner(daraja.url),
    momoSimulatorPartner(momo),
    flutterwaveSimulatorPartner(flutterwave),
    fireblocksSimulatorPartner(fireblocks, sourceVaultId),
  ];
  // The paths under a configuration's callback_url each partner's dashboard is given (docs/rails/).
  const deliverWebhooksTo: RunningPartnerSimulators['deliverWebhooksTo'] = (partner, callbackUrl) => {
    if (partner === 'flutterwave') flutterwave.setWebhookUrl(`${callbackUrl}/webhooks`);
    if (partner === 'fireblocks') fireblocks.setWebhookUrl(`${callbackUrl}/webhook`);
  };
  return {
    darajaUrl: daraja.url,
    momoUrl: momo.url,
    flutterwaveUrl: flutterwave.url,
    fireblocksUrl: fireblocks.baseUrl,
    fireblocksSourceVaultId: sourceVaultId,
    flutterwave,
    fireblocks,
    configs,
    deliverWebhooksTo,
    stop,
  };
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

/** The Flutterwave configuration that points an adapter at a Flutterwave simulator (its keys). */
export function flutterwaveSimulatorPartner(
  sim: Pick<FlutterwaveSimulator, 'url' | 'credentials'>,
): SimulatedPartnerConfig {
  return {
    partner: 'flutterwave',
    settings: { base_url: sim.url },
    credentials: { secret_key: sim.credentials.secretKey, secret_hash: sim.credentials.secretHash },
  };
}

/** The Fireblocks configuration that points an adapter at a Fireblocks simulator, paying from `sourceVaultId`. */
export function fireblocksSimulatorPartner(
  sim: Pick<FireblocksSimulator, 'baseUrl' | 'credentials' | 'webhookPublicKey' | 'jwksUrl'>,
  sourceVaultId: string,
): SimulatedPartnerConfig {
  return {
    partner: 'fireblocks',
    settings: {
      base_url: sim.baseUrl,
      source_vault_account_id: sourceVaultId,
      // The simulator sends both signatures, as Fireblocks does while a workspace migrates to webhooks v2.
      webhook_signatures: 'v1_or_v2',
      webhook_public_key: sim.webhookPublicKey,
      webhook_jwks_url: sim.jwksUrl,
    },
    credentials: { api_key: sim.credentials.apiKey, private_key: sim.credentials.secretKey },
  };
}
