/**
 * The rail-provider gate: a pilot or production key that may move money (`write`) is issued only when
 * every product the organization launches has an active rail partner configured in this deployment for
 * each rail it needs (docs/GOING-LIVE.md). Decided where keys are issued, from that deployment's own
 * configurations: the sandbox's are simulators and prove nothing about production. Keys without `write`
 * pass it, so an organization can configure its partners with an admin key first. Where the organization
 * named the mobile-money markets it pays in (`mpesa:KE`, `mtn:UG`), `mobile_money` needs an active partner
 * whose kind carries each of them (RAIL_PARTNER_SHAPES' `mobileNetworks`), not just one on the rail.
 */
import type { MobileMarket } from '../../domain/mobileMarkets.ts';
import type { LaunchProduct } from '../../domain/organizationProfile.ts';
import type { Rail } from '../../domain/transfers.ts';
import {
  marketsCarriedBy,
  RAIL_PARTNER_SHAPES,
  RAIL_PARTNERS,
  type RailPartnerName,
} from '../railPartners/index.ts';

/** The gate's name where it is reported, after `product/`. */
export const RAIL_PROVIDERS_GATE = 'rail_providers_configured';

/** A configured partner, as the gate reads it. */
export interface ConfiguredProvider {
  partner: string;
  rail: Rail;
  network: string | null;
  status: string;
  /** Its non-secret settings (a MoMo configuration's `target_environment` names its market). */
  settings: Readonly<Record<string, string>>;
}

/** One rail a product needs, and the partners that carry it in production. */
interface ProviderNeed {
  rail: Rail;
  partners: readonly string[];
}

/**
 * What each product needs in production. Card payouts have no production partner: they stay sandbox-only,
 * and a product that offers them is told so (SANDBOX_ONLY_RAILS) rather than refused.
 */
export const PRODUCT_PROVIDER_NEEDS: Record<LaunchProduct, readonly ProviderNeed[]> = {
  mobile_money: [{ rail: 'mobile_money', partners: ['mpesa_daraja', 'mtn_momo'] }],
  digital_banking: [{ rail: 'bank', partners: ['flutterwave'] }],
  // Fireblocks carries digital-asset payouts and holds the custody behind deposit addresses.
  stablecoins: [{ rail: 'digital_asset', partners: ['fireblocks'] }],
};

/** Rails a product offers in the sandbox that no production partner carries yet. */
export const SANDBOX_ONLY_RAILS: Partial<Record<LaunchProduct, readonly Rail[]>> = {
  digital_banking: ['card'],
};

export interface ProviderGateDecision {
  product: LaunchProduct;
  state: 'open' | 'passed';
  /** The active partners that carry the product's rails, `partner:rail[:network]`. */
  configured: string[];
  /** What is missing, `rail (partner or partner)`, or `mobile_money market (partner or partner)`. */
  missing: string[];
  /** The named mobile-money markets no active partner carries (`mtn:UG`). */
  uncoveredNetworks: MobileMarket[];
  sandboxOnly: readonly Rail[];
}

const describeProvider = (p: ConfiguredProvider) =>
  [p.partner, p.rail, ...(p.network ? [p.network] : [])].join(':');

/**
 * Each launched product's provider gate over the deployment's configured partners; `markets`: the
 * mobile-money markets the organization named (null or none: any partner on the rail will do).
 */
export function decideProviderGates(
  products: readonly LaunchProduct[],
  providers: readonly ConfiguredProvider[],
  markets: readonly MobileMarket[] | null = null,
): ProviderGateDecision[] {
  const active = providers.filter((p) => p.status === 'active');
  return products.map((product) => {
    const configured: string[] = [];
    const missing: string[] = [];
    const uncoveredNetworks: MobileMarket[] = [];
    for (const need of PRODUCT_PROVIDER_NEEDS[product]) {
      const carrying = active.filter((p) => p.rail === need.rail && need.partners.includes(p.partner));
      if (need.rail === 'mobile_money' && markets !== null && markets.length > 0) {
        // Any active partner whose kind carries a market counts, whatever rail it is configured on.
        const carriers = active.filter((p) => markets.some((market) => carries(p, market)));
        configured.push(...carriers.map(describeProvider));
        const uncovered = markets.filter((market) => !carriers.some((p) => carries(p, market)));
        uncoveredNetworks.push(...uncovered);
        missing.push(...uncovered.map((market) => `mobile_money ${market} (${carriersOf(market)})`));
        continue;
      }
      configured.push(...carrying.map(describeProvider));
      if (carrying.length === 0) missing.push(`${need.rail} (${need.partners.join(' or ')})`);
    }
    return {
      product,
      state: missing.length === 0 ? 'passed' : 'open',
      configured,
      missing,
      uncoveredNetworks,
      sandboxOnly: SANDBOX_ONLY_RAILS[product] ?? [],
    };
  });
}

const carries = (provider: ConfiguredProvider, market: MobileMarket) =>
  provider.partner in RAIL_PARTNER_SHAPES &&
  marketsCarriedBy(provider.partner as RailPartnerName, provider.settings).includes(market);

/** The partners whose kind carries a market, as the refusal names them. */
function carriersOf(market: MobileMarket): string {
  const kinds = RAIL_PARTNERS.filter((partner) =>
    RAIL_PARTNER_SHAPES[partner].mobileNetworks.includes(market),
  );
  return kinds.length > 0 ? kinds.join(' or ') : 'no partner carries it yet';
}

/** The open provider gates as the refusal names them: `product/rail_providers_configured (missing: …)`. */
export function openProviderGateNames(decisions: readonly ProviderGateDecision[]): string[] {
  return decisions
    .filter((d) => d.state === 'open')
    .map((d) => `${d.product}/${RAIL_PROVIDERS_GATE} (missing: ${d.missing.join(', ')})`);
}

/** What the refusal adds about rails that stay sandbox-only, e.g. card payouts. */
export function sandboxOnlyNotes(decisions: readonly ProviderGateDecision[]): string[] {
  return decisions
    .filter((d) => d.sandboxOnly.length > 0)
    .map((d) => `${d.product}: ${d.sandboxOnly.join(', ')} payouts are sandbox-only`);
}
