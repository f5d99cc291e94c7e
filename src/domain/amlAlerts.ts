/**
 * AML alerts: what a rule saw in a transfer (or in a conversion, named by the quote executed), open until an
 * operator resolves it with a disposition.
 */
import type { AmlAction, AmlRuleType } from './decisions/aml.ts';

export const AML_ALERT_STATUSES = ['open', 'resolved'] as const;
export type AmlAlertStatus = (typeof AML_ALERT_STATUSES)[number];
export const AML_DISPOSITIONS = ['false_positive', 'escalated', 'reported'] as const;
export type AmlDisposition = (typeof AML_DISPOSITIONS)[number];

export interface AmlAlert {
  id: string;
  organizationId: string;
  ruleId: string;
  ruleType: AmlRuleType;
  ruleVersion: number;
  action: Exclude<AmlAction, 'block'>;
  /** The transfer that fired it; null when a conversion did. */
  transferId: string | null;
  /** The conversion quote whose execution fired it (executed or refused); null for a transfer. */
  conversionQuoteId: string | null;
  walletId: string;
  customerId: string;
  status: AmlAlertStatus;
  reason: string;
  observed: Record<string, string | number>;
  disposition: AmlDisposition | null;
  note: string | null;
  resolvedBy: string | null;
  createdAt: Date;
  resolvedAt: Date | null;
}
