/**
 * The rail-provider gate where keys are issued (pilot, production): reads the organization's configured
 * rail partners in this deployment and decides each launched product's gate (providers.ts).
 */
import type { Deps } from '../../app/deps.ts';
import { isLiveEnvironment, type Scope } from '../../domain/access.ts';
import type { MobileMarket } from '../../domain/mobileMarkets.ts';
import { DEFAULT_LAUNCH_PRODUCTS, type LaunchProduct } from '../../domain/organizationProfile.ts';
import { findProfile } from '../../store/repositories/organizationProfiles.ts';
import { findOrganizationByName } from '../../store/repositories/organizations.ts';
import { decideProviderGates, type ProviderGateDecision } from './providers.ts';
import { listConfiguredProviders } from './repository.ts';

/** Whether a key with these scopes may move money (no scopes named: the integrator's `read`, `write`). */
export function keyMayMoveMoney(scopes: readonly Scope[] | undefined): boolean {
  return scopes === undefined || scopes.includes('write');
}

/**
 * Each launched product's provider gate in this deployment. The products and mobile-money markets are the
 * organization's own here, else the sandbox's record of them; an organization not yet here has no partners
 * configured.
 */
export async function providerGatesOf(
  deps: Deps,
  organizationName: string,
  sandboxProducts: readonly LaunchProduct[] | undefined,
): Promise<ProviderGateDecision[]> {
  const organization = await findOrganizationByName(deps.store, organizationName);
  const local = organization ? await findProfile(deps.store, organization.id) : undefined;
  const products = local?.products ?? sandboxProducts ?? DEFAULT_LAUNCH_PRODUCTS;
  const markets = local?.mobileNetworks ?? (await sandboxMarkets(deps, organizationName));
  const providers = organization ? await listConfiguredProviders(deps.store, organization.id) : [];
  return decideProviderGates(products, providers, markets);
}

/** The mobile-money markets the organization named in the sandbox, where keys are read from it. */
async function sandboxMarkets(deps: Deps, organizationName: string): Promise<MobileMarket[] | null> {
  if (!deps.launchGateSource) return null;
  const organization = await findOrganizationByName(deps.launchGateSource, organizationName);
  return organization
    ? ((await findProfile(deps.launchGateSource, organization.id))?.mobileNetworks ?? null)
    : null;
}

/**
 * The provider gates beside the recorded ones a deployment lists (`gates`, whose products they follow):
 * none in the sandbox, where keys are never gated.
 */
export async function railProviderGatesBeside(
  deps: Deps,
  organizationName: string,
  gates: readonly { product: LaunchProduct }[],
): Promise<ProviderGateDecision[]> {
  if (!isLiveEnvironment(deps.environment)) return [];
  const sandboxProducts = gates.length > 0 ? [...new Set(gates.map((g) => g.product))] : undefined;
  return providerGatesOf(deps, organizationName, sandboxProducts);
}
