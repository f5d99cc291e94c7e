/**
 * Governed changes, pure: the sensitive settings of an organization (who holds which role, elevated keys,
 * the authorization policy, conversion rates, fee schedules, AML rules, digital-asset routes, rail partners,
 * the verification provider, trust accounts, launch-gate overrides) and operators' reversals of settled
 * payouts change through one mechanism. The organization's policy decides,
 * per kind, whether a change applies at once or waits for other members' approval (a `change` rule naming
 * the kind); a waiting change is applied in the transaction of the vote that approves it.
 */

/** The kinds of change the policy can govern: a closed list. */
export const GOVERNED_CHANGE_KINDS = [
  'role_grant',
  'api_key',
  'policy',
  'conversion_rate',
  'fee_schedule',
  'aml_rule',
  'digital_asset_route',
  'rail_partner',
  'verification_provider',
  'trust_account',
  'launch_gate_override',
  'transfer_reversal',
] as const;
export type GovernedChangeKind = (typeof GOVERNED_CHANGE_KINDS)[number];

export function isGovernedChangeKind(value: unknown): value is GovernedChangeKind {
  return typeof value === 'string' && (GOVERNED_CHANGE_KINDS as readonly string[]).includes(value);
}

/**
 * `pending` until its approval is decided; then `applied`, `failed` (approved, but the change could no
 * longer be made: `failure` says why), `rejected` or `expired`; `canceled` by its proposer while pending.
 */
export const GOVERNED_CHANGE_STATUSES = [
  'pending',
  'applied',
  'failed',
  'rejected',
  'expired',
  'canceled',
] as const;
export type GovernedChangeStatus = (typeof GOVERNED_CHANGE_STATUSES)[number];

/** The rule id of the default that pilot and production organizations start with. */
export const DEFAULT_CHANGE_RULE_ID = 'second-admin-for-sensitive-changes';
/**
 * The kinds that default governs: role grants, elevated keys, the policy, conversion rates and reversals of
 * settled payouts (money brought back into a wallet at one operator's word).
 */
export const DEFAULT_GOVERNED_KINDS: readonly GovernedChangeKind[] = [
  'role_grant',
  'api_key',
  'policy',
  'conversion_rate',
  'transfer_reversal',
];

/** The largest payload a proposed change stores, in characters of its JSON. */
export const GOVERNED_CHANGE_PAYLOAD_CHARS_MAX = 256_000;

export interface GovernedChangeFailure {
  code: string;
  detail: string;
}

export interface GovernedChange {
  id: string;
  organizationId: string;
  kind: GovernedChangeKind;
  /** What the change does to its target: `create`, `update`, `set`, `close`… (each kind names its own). */
  action: string;
  /** The resource changed; for a creation, null until it is applied. */
  targetId: string | null;
  /** The request as proposed (secrets sealed, never shown). */
  payload: Record<string, unknown>;
  status: GovernedChangeStatus;
  /** The member (or, for a key acting for no member, the key) who proposed it. */
  proposedBy: string;
  /** The proposer's key, for the evidence of the apply. */
  proposedByKey: string | null;
  approvalId: string | null;
  policyVersion: number;
  rule: string;
  failure: GovernedChangeFailure | null;
  createdAt: Date;
  decidedAt: Date | null;
  appliedAt: Date | null;
}

/** The status a pending change takes when its approval ends in `approvalStatus` (approved: see `applied`). */
export function changeStatusAfterApproval(
  approvalStatus: 'rejected' | 'expired' | 'canceled',
): GovernedChangeStatus {
  return approvalStatus;
}
