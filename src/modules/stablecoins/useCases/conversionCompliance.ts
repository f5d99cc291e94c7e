/**
 * A conversion decided as a transfer is, by the AML rules: the rules that apply to the source currency over
 * the source wallet's activity, the `conversion.decision` evidence of the outcome and the alerts it opens, and
 * the refusal when a rule blocks it or asks for a review a conversion cannot wait for.
 */

import { SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { countedTally, NO_MOVEMENTS, tallyKey, windowRange } from '../../../domain/activityTally.ts';
import { CONVERSION_QUOTE_TTL_MS, type ConversionQuote } from '../../../domain/conversions.ts';
import {
  AML_HISTORY_TRANSFERS_MAX,
  type AmlHit,
  type AmlRule,
  amlHistoryWindowSeconds,
  amlTallySpecs,
  applicableRules,
  evaluateAmlRules,
} from '../../../domain/decisions/aml.ts';
import type { TransferComplianceDecision } from '../../../domain/decisions/transferCompliance.ts';
import { AppError } from '../../../domain/errors.ts';
import type { EvidenceDraft } from '../../../domain/evidence.ts';
import { formatAmount } from '../../../domain/money.ts';
import { readWalletActivity, tallyWalletActivity } from '../../../store/repositories/walletActivity.ts';
import type { Queryable } from '../../../store/store.ts';
import type { AmlAlertDraft } from '../../compliance/index.ts';

/** The 422 of a refused conversion, naming the rule that blocked it or asked for a review. */
export function conversionBlocked(ruleName: string | undefined, review: boolean): AppError {
  return new AppError({
    status: 422,
    code: 'compliance_blocked',
    title: 'Blocked by compliance',
    detail: review
      ? `This conversion was refused: the organization's AML rule${ruleName ? ` '${ruleName}'` : ''} asks for a review, and a conversion executes its quote at once (its rate holds for ${CONVERSION_QUOTE_TTL_MS / 1000} s), so it cannot wait for one; an alert was opened. Nothing was converted. Contact your compliance team.`
      : `This conversion was blocked by the organization's AML rule${ruleName ? ` '${ruleName}'` : ''}; nothing was converted. Contact your compliance team.`,
    param: 'quote',
  });
}

/**
 * AML: the rules that apply to the source currency over the source wallet's activity, read with its account
 * locked. The destination is the customer's own wallet, never a new counterparty.
 */
export async function screenConversion(
  tx: Queryable,
  organizationId: string,
  quote: ConversionQuote,
  amlRules: readonly AmlRule[],
  now: Date,
): Promise<{ rulesEvaluated: { id: string; version: number }[]; hits: AmlHit[] }> {
  const rules = applicableRules(amlRules, quote.fromCurrency);
  if (rules.length === 0) return { rulesEvaluated: [], hits: [] };
  const [activity] = await readWalletActivity(
    tx,
    organizationId,
    [{ walletId: quote.fromWalletId, destination: { type: 'wallet', wallet: quote.toWalletId } }],
    new Date(now.getTime() - amlHistoryWindowSeconds(rules) * 1_000),
    AML_HISTORY_TRANSFERS_MAX,
  );
  // A wallet busier than the lists hold has its windows counted instead.
  const specs = amlTallySpecs(rules);
  const counted =
    activity && !activity.complete
      ? await tallyWalletActivity(
          tx,
          organizationId,
          specs.map((spec) => ({ walletId: quote.fromWalletId, spec, ...windowRange(spec, now) })),
        )
      : undefined;
  const unlisted = counted && new Map(specs.map((spec, i) => [tallyKey(spec), counted[i] ?? NO_MOVEMENTS]));
  const rulesEvaluated = rules.map((r) => ({ id: r.id, version: r.version }));
  const hits = evaluateAmlRules(rules, {
    amountMinor: quote.fromAmountMinor,
    currency: quote.fromCurrency,
    at: now,
    recentOutgoing: unlisted ? [] : (activity?.outgoing ?? []),
    recentIncoming: unlisted ? [] : (activity?.incoming ?? []),
    unlisted: unlisted && ((spec) => countedTally(unlisted, spec)),
    counterpartyKnown: true,
  });
  return { rulesEvaluated, hits };
}

/** The `conversion.decision` evidence of a quote's execution, accepted (naming its conversion) or refused. */
export function conversionDecisionEvidence(
  organizationId: string,
  quote: ConversionQuote,
  compliance: TransferComplianceDecision,
  conversionId: string | null,
  createdBy: string | null,
): EvidenceDraft {
  return {
    organizationId,
    kind: 'conversion.decision',
    actor: SYSTEM_ACTOR,
    walletId: quote.fromWalletId,
    customerId: quote.customerId,
    data: {
      ...compliance.evidence,
      conversion_id: conversionId,
      quote_id: quote.id,
      direction: quote.direction,
      from_wallet: quote.fromWalletId,
      to_wallet: quote.toWalletId,
      amount: formatAmount(quote.fromAmountMinor, quote.fromCurrency),
      currency: quote.fromCurrency,
      fee: formatAmount(quote.feeMinor, quote.fromCurrency),
      fee_schedule_version: quote.feeScheduleVersion,
      fee_rule: quote.feeRule,
      created_by: createdBy,
    },
  };
}

/** The AML alerts a decision opens, each naming the quote whose execution fired it. */
export function conversionAlerts(
  organizationId: string,
  quote: ConversionQuote,
  compliance: TransferComplianceDecision,
): AmlAlertDraft[] {
  return compliance.alerts.map((hit) => ({
    organizationId,
    conversionQuoteId: quote.id,
    walletId: quote.fromWalletId,
    customerId: quote.customerId,
    hit,
  }));
}
