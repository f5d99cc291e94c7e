/**
 * Telling a partner where to send payers' own payments (M-Pesa C2B's Register URL): an admin's deliberate
 * action on an active partner configuration, since Safaricom takes a production registration once (changing
 * it means deleting it on their portal first). The call goes out before any transaction, through the
 * partner's circuit breaker; what was registered is then recorded as evidence.
 */
import type { Deps } from '../../../app/deps.ts';
import { AppError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import type { CreditUrlRegistration } from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import type { RailPartnerConfig } from '../domain.ts';
import type { RailPartnerDirectory } from './directory.ts';
import { callbackBaseUrl, getRailPartner, recordChange } from './partners.ts';
import { partnerErrorMessage, partnerUnavailable } from './partnerUnavailable.ts';

export interface CreditUrlsRegistered {
  config: RailPartnerConfig;
  registration: CreditUrlRegistration;
}

/** A configuration whose credit callback addresses cannot be registered now: 409 naming why. */
function notRegistrable(detail: string): AppError {
  return new AppError({ status: 409, code: 'credit_urls_not_registrable', title: 'Cannot register', detail });
}

/** Registers the configuration's credit callback addresses with its partner; refuses what cannot be. */
export async function registerCreditUrls(
  deps: Deps,
  directory: RailPartnerDirectory,
  organizationId: string,
  configId: string,
): Promise<CreditUrlsRegistered> {
  const config = await getRailPartner(deps, organizationId, configId);
  if (config.status !== 'active') {
    throw notRegistrable('The partner is disabled; only an active partner is registered.');
  }
  if (callbackBaseUrl(deps, config) === null) {
    throw notRegistrable('MKOBA_PUBLIC_URL is not set, so there is no callback address to register.');
  }
  const rail = directory.guarded(config);
  const register = rail.adapter.registerCreditUrls?.bind(rail.adapter);
  if (!register) {
    throw notRegistrable(`${config.partner} takes no registration of credit callback addresses.`);
  }
  try {
    return { config, registration: await rail.call(register) };
  } catch (error) {
    // Paused, rate limited, unreachable or refusing: nothing was registered, and asking again is safe.
    throw partnerUnavailable(
      `${config.partner} did not register the addresses: ${partnerErrorMessage(error)}`,
      error,
    );
  }
}

/** The evidence of a registration, in the write's transaction. */
export async function recordCreditUrlRegistration(
  tx: Queryable,
  deps: Deps,
  registered: CreditUrlsRegistered,
  actor: EvidenceActor,
): Promise<void> {
  await recordChange(tx, deps, registered.config, actor, {
    action: 'register_credit_urls',
    settings: [],
    credentials: [],
  });
}
