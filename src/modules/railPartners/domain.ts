/**
 * Rail partners, pure: which partners exist, which rail and network each carries, the settings and the
 * credentials each needs, and how a configuration is checked. An organization configures at most one
 * active partner per rail and network; its credentials are sealed at rest and never shown again.
 */
import { validationError } from '../../domain/errors.ts';
import { requireObject } from '../../domain/json.ts';
import type { MobileMarket } from '../../domain/mobileMarkets.ts';
import { checkOutboundUrl, type OutboundAddressPolicy } from '../../domain/outboundAddresses.ts';
import type { Rail } from '../../domain/transfers.ts';

export const RAIL_PARTNERS = ['mpesa_daraja', 'mtn_momo', 'flutterwave', 'fireblocks'] as const;
export type RailPartnerName = (typeof RAIL_PARTNERS)[number];

export const RAIL_PARTNER_STATUSES = ['active', 'disabled'] as const;
export type RailPartnerStatus = (typeof RAIL_PARTNER_STATUSES)[number];

interface PartnerShape {
  rail: Rail;
  /** The mobile-money network it carries (null: every destination on the rail). */
  network: string | null;
  /** Other rails whose payouts the same configuration carries (M-Pesa's paybills and tills). */
  alsoCarries: readonly Rail[];
  /**
   * The mobile-money markets (network in a country) it carries: what the launch gate holds an
   * organization's named markets against (docs/GOING-LIVE.md), and what routes a payout to a partner whose
   * own rail is not `mobile_money` (Flutterwave) when the organization has no active partner of its own on
   * that network (mobileMoneyCarriers). Empty for a partner that carries none.
   */
  mobileNetworks: readonly MobileMarket[];
  /** Non-secret settings, shown back to operators. */
  settings: readonly string[];
  /** Optional settings among them. */
  optionalSettings: readonly string[];
  /** Secrets: sealed at rest, write-only. */
  credentials: readonly string[];
  /** Optional credentials among them. */
  optionalCredentials: readonly string[];
}

export const RAIL_PARTNER_SHAPES: Record<RailPartnerName, PartnerShape> = {
  mpesa_daraja: {
    rail: 'mobile_money',
    network: 'mpesa',
    // Paybills and tills are M-Pesa accounts too: paid by B2B from the same shortcode and credentials.
    alsoCarries: ['paybill', 'till'],
    // Daraja is Safaricom's: Kenya's M-Pesa only (Tanzania's is Vodacom's, another API).
    mobileNetworks: ['mpesa:KE'],
    settings: [
      'base_url',
      'short_code',
      'initiator_name',
      'stk_short_code',
      'stk_transaction_type',
      'stk_party_b',
      'b2c_command_id',
      'security_certificate',
    ],
    optionalSettings: [
      'stk_short_code',
      'stk_transaction_type',
      'stk_party_b',
      'b2c_command_id',
      'security_certificate',
    ],
    // The security credential pre-encrypted, or the initiator's password for the adapter to encrypt with
    // settings.security_certificate (Safaricom's certificate, PEM): one of the two (checkDarajaInitiator).
    credentials: ['consumer_key', 'consumer_secret', 'security_credential', 'passkey', 'initiator_password'],
    optionalCredentials: ['security_credential', 'initiator_password'],
  },
  mtn_momo: {
    rail: 'mobile_money',
    network: 'mtn',
    alsoCarries: [],
    // The MTN markets on the MoMo Open API among those Mkoba pays (docs/rails/mtn-momo.md: each contracts apart).
    mobileNetworks: ['mtn:UG', 'mtn:RW', 'mtn:GH', 'mtn:ZA'],
    settings: ['base_url', 'target_environment'],
    optionalSettings: [],
    credentials: ['api_user', 'api_key', 'collection_subscription_key', 'disbursement_subscription_key'],
    optionalCredentials: [],
  },
  // Bank payouts (every bank on the rail) and bank deposits into virtual account numbers; mobile-money
  // payouts on the networks its transfers reach (docs/rails/flutterwave.md) where no M-Pesa/MoMo partner is.
  flutterwave: {
    rail: 'bank',
    network: null,
    alsoCarries: [],
    // The operators Flutterwave's Mobile Money Transfer page lists, per country (docs/rails/flutterwave.md).
    mobileNetworks: [
      'mpesa:KE',
      'mtn:GH',
      'mtn:UG',
      'mtn:RW',
      'airtel:UG',
      'airtel:TZ',
      'tigo:TZ',
      'vodacom:TZ',
    ],
    // The sender Flutterwave requires on an M-Pesa Kenya transfer (`meta.sender`, `sender_country`,
    // `mobile_number`).
    settings: ['base_url', 'sender_name', 'sender_country', 'sender_mobile_number'],
    optionalSettings: ['sender_name', 'sender_country', 'sender_mobile_number'],
    // The secret key signs every call; the secret hash (set on the dashboard) verifies its webhooks.
    credentials: ['secret_key', 'secret_hash'],
    optionalCredentials: [],
  },
  // Custody: digital-asset payouts out of a Fireblocks vault account, on every network (docs/rails/fireblocks.md).
  fireblocks: {
    rail: 'digital_asset',
    network: null,
    alsoCarries: [],
    mobileNetworks: [],
    // webhook_signatures: v1 (the default, webhook_public_key), v2 (webhook_jwks_url) or v1_or_v2.
    settings: [
      'base_url',
      'source_vault_account_id',
      'webhook_public_key',
      'webhook_signatures',
      'webhook_jwks_url',
    ],
    optionalSettings: ['webhook_public_key', 'webhook_signatures', 'webhook_jwks_url'],
    credentials: ['api_key', 'private_key'],
    optionalCredentials: [],
  },
};

/**
 * The MTN market a MoMo configuration's `target_environment` names (docs/rails/mtn-momo.md): MTN contracts
 * each country apart, so one configuration carries that market alone. `sandbox` (MTN's, or a simulator's
 * stand-in) stands for every market the kind lists.
 */
const MOMO_TARGET_ENVIRONMENT_MARKETS: Readonly<Record<string, MobileMarket>> = {
  mtnuganda: 'mtn:UG',
  mtnrwanda: 'mtn:RW',
  mtnghana: 'mtn:GH',
  mtnsouthafrica: 'mtn:ZA',
};

/** The mobile-money markets one configuration carries: its kind's, narrowed by what its settings name. */
export function marketsCarriedBy(
  partner: RailPartnerName,
  settings: Readonly<Record<string, string>>,
): readonly MobileMarket[] {
  const markets = RAIL_PARTNER_SHAPES[partner].mobileNetworks;
  if (partner !== 'mtn_momo' || settings.target_environment === 'sandbox') return markets;
  const market = MOMO_TARGET_ENVIRONMENT_MARKETS[settings.target_environment ?? ''];
  return market !== undefined && markets.includes(market) ? [market] : [];
}

/**
 * The rail and network under which the configuration carrying a payout's rail and network is kept: a
 * rail another partner's shape also carries (paybill, till) is looked up under that partner's own rail
 * and network, so the organization's M-Pesa configuration carries them without a configuration of its own.
 */
export function railPartnerLookup(
  rail: Rail,
  network: string | null,
): { rail: Rail; network: string | null } {
  const carrier = Object.values(RAIL_PARTNER_SHAPES).find((shape) => shape.alsoCarries.includes(rail));
  return carrier ? { rail: carrier.rail, network: carrier.network } : { rail, network };
}

/**
 * The partners that may carry a mobile-money payout on `network`, in the order they are tried: the network's
 * own partners first (mobile_money on that network: a contracted Daraja wins for Safaricom, MoMo for MTN),
 * then partners on another rail that declare the network (Flutterwave's mobile-money transfers), used only
 * when the organization has none of the first.
 */
export function mobileMoneyCarriers(network: string): RailPartnerName[] {
  const declaring = RAIL_PARTNERS.filter((name) =>
    RAIL_PARTNER_SHAPES[name].mobileNetworks.some((market) => market.startsWith(`${network}:`)),
  );
  const own = (name: RailPartnerName) => RAIL_PARTNER_SHAPES[name].rail === 'mobile_money';
  return [...declaring.filter(own), ...declaring.filter((name) => !own(name))];
}

/** Every rail a configuration's payouts may be on: its own, those its shape also carries, mobile money. */
export function railsCarriedBy(config: Pick<RailPartnerConfig, 'partner' | 'rail'>): readonly Rail[] {
  const shape = RAIL_PARTNER_SHAPES[config.partner];
  const rails: Rail[] = [config.rail, ...shape.alsoCarries];
  if (shape.mobileNetworks.length > 0 && !rails.includes('mobile_money')) rails.push('mobile_money');
  return rails;
}

/** Settings that take one of a few values. */
const SETTING_VALUES: Record<string, readonly string[]> = {
  stk_transaction_type: ['CustomerPayBillOnline', 'CustomerBuyGoodsOnline'],
  b2c_command_id: ['BusinessPayment', 'SalaryPayment', 'PromotionPayment'],
};

/** Characters of a setting or credential value at most. */
export const RAIL_PARTNER_FIELD_LENGTH_MAX = 4_096;
/** Random bytes in a callback path token (base64url: 43 characters). */
/** What became of a partner's callback: stored, then applied once, or why not. */
export const RAIL_CALLBACK_STATUSES = [
  'received',
  'applied',
  'duplicate',
  'unchanged',
  'ignored',
  'malformed',
  'exception',
] as const;
export type RailCallbackStatus = (typeof RAIL_CALLBACK_STATUSES)[number];

export const CALLBACK_TOKEN_BYTES = 32;
export const CALLBACK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface RailPartnerConfig {
  id: string;
  organizationId: string;
  rail: Rail;
  network: string | null;
  partner: RailPartnerName;
  status: RailPartnerStatus;
  settings: Record<string, string>;
  /** The names of the credentials held (their values are sealed, never read back out). */
  credentialNames: string[];
  sealedCredentials: string;
  callbackToken: string;
  createdAt: Date;
  updatedAt: Date;
}

function checkFields(
  param: 'settings' | 'credentials',
  given: unknown,
  required: readonly string[],
  optional: readonly string[],
  partial: boolean,
): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(requireObject(given, param))) {
    if (!required.includes(name) && !optional.includes(name)) {
      throw validationError(`${param}.${name}`, `${name} is not a field of this partner`, 'unknown_field');
    }
    if (typeof value !== 'string' || value.trim() === '' || value.length > RAIL_PARTNER_FIELD_LENGTH_MAX) {
      throw validationError(
        `${param}.${name}`,
        `${name} must be a non-empty string of at most ${RAIL_PARTNER_FIELD_LENGTH_MAX} characters`,
        'invalid_value',
      );
    }
    const allowed = param === 'settings' ? SETTING_VALUES[name] : undefined;
    if (allowed && !allowed.includes(value.trim())) {
      throw validationError(
        `${param}.${name}`,
        `${name} must be one of: ${allowed.join(', ')}`,
        'invalid_value',
      );
    }
    fields[name] = value.trim();
  }
  if (!partial) {
    for (const name of required) {
      if (fields[name] === undefined)
        throw validationError(`${param}.${name}`, `${name} is required`, 'missing');
    }
  }
  return fields;
}

/**
 * `base_url` under the outbound address guard (outboundAddresses.ts): HTTPS to a public host in pilot and
 * production; the sandbox also allows this machine (a loopback address or localhost, HTTP or HTTPS) for its
 * own simulators, and nothing else that is not public. Refused: 400 `validation_error`, field code
 * `invalid_url`, param `settings.base_url`.
 */
function checkBaseUrl(
  settings: Record<string, string>,
  policy: OutboundAddressPolicy,
  name: 'base_url' | 'webhook_jwks_url' = 'base_url',
): void {
  const value = settings[name];
  if (value === undefined) return;
  const verdict = checkOutboundUrl(value, policy);
  if (!verdict.ok) {
    throw validationError(`settings.${name}`, `${name} ${verdict.reason}`, 'invalid_url');
  }
}

/** Fireblocks' webhook signatures a configuration accepts (the adapter's webhookJwks.ts). */
const FIREBLOCKS_WEBHOOK_SIGNATURE_SETTINGS = ['v1', 'v2', 'v1_or_v2'];

/**
 * A Fireblocks configuration's webhook settings: `webhook_signatures` one of the schemes, `webhook_jwks_url`
 * under the address guard, and `webhook_public_key` present unless only v2 is accepted (not checked on a
 * partial update, which the stored settings complete).
 */
function checkFireblocksWebhookSettings(
  settings: Record<string, string>,
  options: { partial: boolean; addressPolicy: OutboundAddressPolicy },
): void {
  const signatures = settings.webhook_signatures;
  if (signatures !== undefined && !FIREBLOCKS_WEBHOOK_SIGNATURE_SETTINGS.includes(signatures)) {
    throw validationError(
      'settings.webhook_signatures',
      `webhook_signatures is one of ${FIREBLOCKS_WEBHOOK_SIGNATURE_SETTINGS.join(', ')}`,
      'invalid_value',
    );
  }
  checkBaseUrl(settings, options.addressPolicy, 'webhook_jwks_url');
  if (!options.partial && signatures !== 'v2' && settings.webhook_public_key === undefined) {
    throw validationError(
      'settings.webhook_public_key',
      'webhook_public_key is required unless webhook_signatures is v2',
      'missing',
    );
  }
}

/**
 * A partner's settings and credentials, checked: every required field present (unless `partial`, for an
 * update that changes some), none unknown; `base_url` where `addressPolicy` lets the service call.
 */
export function checkRailPartnerFields(
  partner: RailPartnerName,
  input: { settings?: unknown; credentials?: unknown },
  options: { partial: boolean; addressPolicy: OutboundAddressPolicy },
): { settings?: Record<string, string>; credentials?: Record<string, string> } {
  const shape = RAIL_PARTNER_SHAPES[partner];
  const out: { settings?: Record<string, string>; credentials?: Record<string, string> } = {};
  if (input.settings !== undefined || !options.partial) {
    const required = shape.settings.filter((s) => !shape.optionalSettings.includes(s));
    out.settings = checkFields(
      'settings',
      input.settings ?? {},
      required,
      shape.optionalSettings,
      options.partial,
    );
    checkBaseUrl(out.settings, options.addressPolicy);
    if (partner === 'fireblocks') checkFireblocksWebhookSettings(out.settings, options);
  }
  if (input.credentials !== undefined || !options.partial) {
    out.credentials = checkFields(
      'credentials',
      input.credentials ?? {},
      shape.credentials.filter((c) => !shape.optionalCredentials.includes(c)),
      shape.optionalCredentials,
      options.partial,
    );
  }
  if (partner === 'mpesa_daraja' && !options.partial) checkDarajaInitiator(out);
  return out;
}

/**
 * M-Pesa's initiator authenticates by a SecurityCredential: given pre-encrypted (`security_credential`),
 * or made by the adapter from `initiator_password` and the certificate (`settings.security_certificate`).
 */
function checkDarajaInitiator(fields: {
  settings?: Record<string, string>;
  credentials?: Record<string, string>;
}): void {
  const credentials = fields.credentials ?? {};
  if (credentials.security_credential === undefined && credentials.initiator_password === undefined) {
    throw validationError(
      'credentials.security_credential',
      'security_credential is required, or initiator_password with settings.security_certificate',
      'missing',
    );
  }
  if (credentials.initiator_password !== undefined && fields.settings?.security_certificate === undefined) {
    throw validationError(
      'settings.security_certificate',
      'security_certificate is required with credentials.initiator_password',
      'missing',
    );
  }
}

/** The sealing context of an organization's credentials for one partner configuration. */
export const railPartnerCredentialsContext = (configId: string) => `rail_partner_credentials:${configId}`;
