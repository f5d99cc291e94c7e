/**
 * MTN's target environments (X-Target-Environment) and the one currency each holds: MTN's sandbox takes EUR
 * only (its Sandbox Use Cases page), and each market its own currency, so a request in any other currency
 * is refused with INVALID_CURRENCY ("needs to match the target environment currency", the common-errors
 * page).
 */

/** MTN's sandbox's X-Target-Environment. */
export const MOMO_SANDBOX_ENVIRONMENT = 'sandbox';

/** The simulator's default X-Target-Environment: MTN Uganda, whose numbers the magic numbers are. */
export const MOMO_SIMULATOR_DEFAULT_ENVIRONMENT = 'mtnuganda';

/** Each target environment MTN names and the currency its accounts hold (ISO 4217). */
export const MOMO_ENVIRONMENT_CURRENCIES: Readonly<Record<string, string>> = {
  sandbox: 'EUR',
  mtnuganda: 'UGX',
  mtnghana: 'GHS',
  mtnivorycoast: 'XOF',
  mtnzambia: 'ZMW',
  mtncameroon: 'XAF',
  mtnbenin: 'XOF',
  mtncongo: 'XAF',
  mtnswaziland: 'SZL',
  mtnguineaconakry: 'GNF',
  mtnsouthafrica: 'ZAR',
  mtnliberia: 'LRD',
  mtnrwanda: 'RWF',
  mtnnigeria: 'NGN',
  mtnsouthsudan: 'SSP',
};

/**
 * The currencies a simulator takes: those it was given, else its environment's one; undefined (any) for an
 * environment MTN does not name.
 */
export function currenciesOf(
  targetEnvironment: string,
  given: readonly string[] | undefined,
): readonly string[] | undefined {
  if (given !== undefined) return given;
  const currency = Object.hasOwn(MOMO_ENVIRONMENT_CURRENCIES, targetEnvironment)
    ? MOMO_ENVIRONMENT_CURRENCIES[targetEnvironment]
    : undefined;
  return currency === undefined ? undefined : [currency];
}
