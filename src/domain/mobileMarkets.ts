/**
 * Mobile-money markets, pure: a network in one country (`mpesa:KE`, `mtn:UG`), the unit in which an
 * organization names where it pays and a rail partner says what it carries. A network name alone is not
 * enough: Safaricom's M-Pesa (Kenya) and Vodacom's (Tanzania) are different companies and APIs, and MTN
 * contracts each country separately.
 */
import { validationError } from './errors.ts';
import { requireOneOf } from './json.ts';
import { MOBILE_NETWORK_COUNTRY_CODES, MOBILE_NETWORKS, type MobileNetwork } from './transfers.ts';

/** The countries Mkoba's mobile-money networks are in (ISO 3166-1 alpha-2), by calling code. */
export const COUNTRY_OF_CALLING_CODE: Readonly<Record<string, string>> = {
  '254': 'KE',
  '255': 'TZ',
  '256': 'UG',
  '250': 'RW',
  '233': 'GH',
  '234': 'NG',
  '27': 'ZA',
};

/** `network:COUNTRY`, e.g. `mpesa:KE`. */
export type MobileMarket = `${MobileNetwork}:${string}`;

/** Every market a destination can name: each network in each country its numbers may carry. */
export const MOBILE_MARKETS: readonly MobileMarket[] = MOBILE_NETWORKS.flatMap((network) =>
  MOBILE_NETWORK_COUNTRY_CODES[network].map(
    (code) => `${network}:${COUNTRY_OF_CALLING_CODE[code]}` as MobileMarket,
  ),
);

/** Markets an organization names at most (every market there is). */
export const MOBILE_MARKETS_MAX = MOBILE_MARKETS.length;

/** The markets as named, checked: each one of MOBILE_MARKETS, none twice (400 naming `param[i]`). */
export function parseMobileMarkets(named: readonly string[], param: string): MobileMarket[] {
  const seen = new Set<string>();
  return named.map((name, i) => {
    const market = requireOneOf(name, MOBILE_MARKETS, `${param}[${i}]`);
    if (seen.has(market)) {
      throw validationError(`${param}[${i}]`, `${market} is named twice`, 'duplicate');
    }
    seen.add(market);
    return market;
  });
}
