/**
 * A customer's risk level, pure: derived from what is known of it (its verification, a confirmed sanctions
 * match, its open AML alerts), unless an operator has set it, which is itself recorded as evidence.
 */
export const RISK_LEVELS = ['low', 'medium', 'high'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Open AML alerts from which a customer is high risk. */
export const RISK_HIGH_OPEN_ALERTS_MIN = 3;
export const RISK_OVERRIDE_REASON_LENGTH_MAX = 500;

export interface RiskFacts {
  kycStatus: string;
  /** A sanctions match confirmed on the customer (a rejected screening review). */
  sanctionsHit: boolean;
  openAlerts: number;
}

/**
 * High: a confirmed sanctions match, a rejected verification, or RISK_HIGH_OPEN_ALERTS_MIN open alerts;
 * medium: any open alert, or not (yet) verified; low: verified with nothing open.
 */
export function deriveRiskLevel(facts: RiskFacts): RiskLevel {
  if (facts.sanctionsHit || facts.kycStatus === 'rejected' || facts.openAlerts >= RISK_HIGH_OPEN_ALERTS_MIN) {
    return 'high';
  }
  if (facts.openAlerts > 0 || facts.kycStatus !== 'verified') return 'medium';
  return 'low';
}

export function effectiveRiskLevel(facts: RiskFacts, override: RiskLevel | null): RiskLevel {
  return override ?? deriveRiskLevel(facts);
}
