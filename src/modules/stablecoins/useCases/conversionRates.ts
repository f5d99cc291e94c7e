/**
 * Conversion rates: data per organization (an operator's table; the sandbox starts with defaults), each
 * pair's rate a version that says why it applied. A replacement of the table is planned against the rates in
 * force and the band (MKOBA_CONVERSION_RATE_BAND_BPS), then applied at once, or once a second member
 * approved the pairs that need it. Quotes are given, and executed, at the rates in force here.
 */

import type { Deps } from '../../../app/deps.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import {
  CONVERSION_RATE_BAND_BPS_DEFAULT,
  CONVERSION_RATES_MAX,
  type ConversionRateEntry,
  conversionDirection,
  decideRateChange,
  parseConversionRate,
  type RateChangeDecision,
  rateChangesRequiringApproval,
  roundTripGain,
  SANDBOX_DEFAULT_CONVERSION_RATES,
} from '../../../domain/conversions.ts';
import type { ApprovalRequirement } from '../../../domain/decisions/policies.ts';
import { isDigitalAsset } from '../../../domain/digitalAssets.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { type Currency, isCurrency } from '../../../domain/money.ts';
import { formatRate } from '../../../domain/rates.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  type ConversionRateVersion,
  insertConversionRatesIfNone,
  insertConversionRateVersions,
  listConversionRates,
  pairsWithRateHistory,
  replaceConversionRates,
  type StoredConversionRate,
} from '../repository/conversionRates.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { StoredConversionRate } from '../repository/conversionRates.ts';

const isAsset = (c: Currency) => isDigitalAsset(c);

/** The band rates and quotes are held to: MKOBA_CONVERSION_RATE_BAND_BPS, 5 % by default. */
export function rateBandBps(deps: Deps): number {
  return deps.conversionRateBandBps ?? CONVERSION_RATE_BAND_BPS_DEFAULT;
}

/** Writes the sandbox's default rates (each a version, basis `defaults`) in the caller's transaction if the organization has none yet. */
async function ensureDefaultRates(tx: Queryable, deps: Deps, organizationId: string): Promise<void> {
  if (deps.environment !== 'sandbox') return;
  const written = await insertConversionRatesIfNone(
    tx,
    organizationId,
    SANDBOX_DEFAULT_CONVERSION_RATES.map((r) => ({ ...r, id: deps.newId('conversionRateVersion') })),
    deps.now(),
  );
  if (!written) return;
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'conversion.rates.update',
      actor: SYSTEM_ACTOR,
      data: { change: 'defaults', after: SANDBOX_DEFAULT_CONVERSION_RATES.map((r) => ({ ...r })) },
    },
  ]);
}

export async function getConversionRates(
  deps: Deps,
  organizationId: string,
): Promise<StoredConversionRate[]> {
  const rates = await listConversionRates(deps.store, organizationId);
  if (rates.length > 0 || deps.environment !== 'sandbox') return rates;
  await deps.store.transaction((tx) => ensureDefaultRates(tx, deps, organizationId));
  return listConversionRates(deps.store, organizationId);
}

/**
 * A proposed replacement of the organization's rates, checked and decided against the rates in force (read
 * locked): each pair's decision (`decideRateChange`) and which of them need a second member's approval
 * (`requiringApproval`). Applying it (`applyRateChange`) writes it; nothing is written before.
 */
export interface RateChangePlan {
  organizationId: string;
  rates: ConversionRateEntry[];
  before: StoredConversionRate[];
  decisions: RateChangeDecision[];
  requiringApproval: RateChangeDecision[];
  bandBps: number;
}

/**
 * Checks a replacement of the rates (each a pair of a fiat currency and a stablecoin, either way round,
 * with a positive decimal rate of at most 12 decimals, no pair twice) and decides each pair's change
 * against the rate in force, the band, and whether the pair ever had a rate. Locks the rates in force.
 */
export async function planRateChange(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: { rates: { from: string; to: string; rate: string }[] },
): Promise<RateChangePlan> {
  if (input.rates.length > CONVERSION_RATES_MAX) {
    throw validationError('rates', `rates may have at most ${CONVERSION_RATES_MAX} entries`, 'too_many');
  }
  const seen = new Set<string>();
  const parsed = input.rates.map((entry, i) => {
    const at = (field: string) => `rates[${i}].${field}`;
    for (const field of ['from', 'to'] as const) {
      if (!isCurrency(entry[field]))
        throw validationError(at(field), `${at(field)} is not a supported currency`, 'invalid_value');
    }
    const from = entry.from as Currency;
    const to = entry.to as Currency;
    if (!conversionDirection(from, to, isAsset)) {
      throw validationError(
        at('to'),
        `${at('to')}: a rate converts between a fiat currency and a stablecoin (USDC, USDT), one each`,
        'unsupported_conversion',
      );
    }
    if (seen.has(`${from}/${to}`))
      throw validationError(at('from'), `${from} to ${to} is given twice`, 'duplicate_key');
    seen.add(`${from}/${to}`);
    return { from, to, rate: parseConversionRate(entry.rate, at('rate')) };
  });
  const gain = roundTripGain(parsed);
  if (gain) {
    const param = `rates[${gain.index}].rate`;
    throw validationError(
      param,
      `${param}: ${gain.from} to ${gain.to} and back would return more than was sent (the two rates multiply to more than 1)`,
      'round_trip_gain',
    );
  }
  await ensureDefaultRates(tx, deps, organizationId);
  const before = await listConversionRates(tx, organizationId, { forUpdate: true });
  const inForce = new Map(before.map((r) => [`${r.from}/${r.to}`, r]));
  const bandBps = rateBandBps(deps);
  const decisions = parsed.map((p) => {
    const current = inForce.get(`${p.from}/${p.to}`);
    return decideRateChange(p, current && parseConversionRate(current.rate, 'rate'), p.rate, bandBps);
  });
  const firsts = decisions.filter((d) => d.reason === 'no_previous_rate');
  const history = await pairsWithRateHistory(tx, organizationId, firsts);
  const requiringApproval = rateChangesRequiringApproval(decisions, {
    sandbox: deps.environment === 'sandbox',
    hadRate: (pair) => history.has(`${pair.from}/${pair.to}`),
  });
  return {
    organizationId,
    rates: parsed.map((p) => ({ from: p.from, to: p.to, rate: formatRate(p.rate) })),
    before,
    decisions,
    requiringApproval,
    bandBps,
  };
}

/** The 409 a change gets while it needs a second member's approval and no approval has passed. */
export function rateChangeRequiresApproval(plan: RateChangePlan): AppError {
  const what = plan.requiringApproval
    .map((d) =>
      d.previous === null
        ? `${d.from} to ${d.to} has no rate in force to bound ${d.next}`
        : `${d.from} to ${d.to} from ${d.previous} to ${d.next} moves more than ${plan.bandBps / 100} % (${plan.bandBps} basis points)`,
    )
    .join('; ');
  return new AppError({
    status: 409,
    code: 'rate_change_requires_approval',
    title: 'Rate change needs approval',
    detail: `This rate change needs a second member's approval: ${what}. Nothing was changed.`,
    param: 'rate',
  });
}

/** Who set a rate, as its version names them: the member, else the API key or console session, else `system`. */
function setByOf(actor: EvidenceActor): string {
  if (actor.type === 'system') return 'system';
  return actor.member ?? actor.id;
}

/**
 * Writes a planned change: a new version for every pair whose rate changed (its previous rate, who set it
 * and why it applied: `within_band`, `sandbox_first_rate`, or `approved` when a second member approved
 * it), the table replaced with each pair naming its version, and the evidence. Called at once for a change
 * that needs no approval, and once an approval passes for one that did.
 */
export async function applyRateChange(
  tx: Queryable,
  deps: Deps,
  plan: RateChangePlan,
  actor: EvidenceActor,
  options: { approved?: boolean } = {},
): Promise<StoredConversionRate[]> {
  const { organizationId } = plan;
  const now = deps.now();
  const inForce = new Map(plan.before.map((r) => [`${r.from}/${r.to}`, r]));
  const versions: ConversionRateVersion[] = [];
  const rates = plan.rates.map((r, i) => {
    const decision = plan.decisions[i] as RateChangeDecision;
    const current = inForce.get(`${r.from}/${r.to}`);
    if (decision.reason === 'unchanged') return { ...r, versionId: current?.versionId ?? null };
    const version: ConversionRateVersion = {
      id: deps.newId('conversionRateVersion'),
      organizationId,
      from: r.from,
      to: r.to,
      rate: r.rate,
      previousRate: decision.previous,
      basis: options.approved
        ? 'approved'
        : decision.reason === 'no_previous_rate'
          ? 'sandbox_first_rate'
          : 'within_band',
      setBy: setByOf(actor),
      createdAt: now,
    };
    versions.push(version);
    return { ...r, versionId: version.id };
  });
  await insertConversionRateVersions(tx, versions);
  await replaceConversionRates(tx, organizationId, rates, now);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'conversion.rates.update',
      actor,
      data: {
        change: 'replace',
        band_bps: plan.bandBps,
        before: plan.before.map((r) => ({ from: r.from, to: r.to, rate: r.rate, version: r.versionId })),
        after: rates.map((r) => ({ from: r.from, to: r.to, rate: r.rate, version: r.versionId })),
        versions: versions.map((v) => ({
          id: v.id,
          from: v.from,
          to: v.to,
          rate: v.rate,
          previous_rate: v.previousRate,
          basis: v.basis,
          set_by: v.setBy,
        })),
      },
    },
  ]);
  return listConversionRates(tx, organizationId);
}

/**
 * The rule an approval of a rate change names when it was the band (not the organization's policy) that
 * asked for it: a second member with the `admin` or `compliance` role, within a day.
 */
export const RATE_BAND_RULE_ID = 'conversion_rate_band';
export const RATE_BAND_APPROVAL: ApprovalRequirement = {
  quorum: 1,
  roles: ['admin', 'compliance'],
  distinctRoles: false,
  expiresInSeconds: 86_400,
};

/**
 * Replaces the organization's rates whole (`PUT /v1/conversion-rates`): planned, then applied at once when
 * no pair needs approval; otherwise a 409 `rate_change_requires_approval` and nothing written. Removing a
 * pair needs no approval (it stops quotes, it cannot create money).
 */
export async function putConversionRates(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: { rates: { from: string; to: string; rate: string }[] },
  actor: EvidenceActor,
): Promise<StoredConversionRate[]> {
  const plan = await planRateChange(tx, deps, organizationId, input);
  if (plan.requiringApproval.length > 0) throw rateChangeRequiresApproval(plan);
  return applyRateChange(tx, deps, plan, actor);
}
