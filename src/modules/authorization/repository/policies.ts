/** Policies: an organization's versions (written one after another, never forked) and proposed changes. */
import type { Policy } from '../../../domain/decisions/policies.ts';
import { defaultRuleJson, ruleJson, rulesFromStored } from '../../../domain/decisions/policyJson.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
} from '../../../store/repositories/records.ts';
import {
  nullableDate,
  nullableNumber,
  nullableText,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import { versionedRecords } from '../../../store/repositories/versions.ts';
import type { Queryable } from '../../../store/store.ts';

/** The rules and default of a version or a proposed change, as their two jsonb columns store them. */
function storedRules({ rules, defaultRule }: Pick<Policy, 'rules' | 'defaultRule'>): [string, string] {
  return [JSON.stringify(rules.map(ruleJson)), JSON.stringify(defaultRuleJson(defaultRule))];
}

function rulesOfRow(row: Record<string, unknown>): Pick<Policy, 'rules' | 'defaultRule'> {
  return rulesFromStored(toJsonObject(row.rules), toJsonObject(row.default_rule));
}

const COLUMNS = 'organization_id, version, rules, default_rule, created_by, approval_id, created_at';

function fromRow(row: Record<string, unknown>): Policy {
  const { rules, defaultRule } = rulesOfRow(row);
  return {
    organizationId: String(row.organization_id),
    version: Number(row.version),
    rules,
    defaultRule,
    createdBy: String(row.created_by),
    approvalId: nullableText(row.approval_id),
    createdAt: toDate(row.created_at),
  };
}

const POLICY_VERSIONS = versionedRecords({
  name: 'policy_versions',
  columns: COLUMNS,
  fromRow,
  lockName: 'mkoba.policy',
});

/** The organization's newest policy version, if it has written one. */
export const findCurrentPolicy = POLICY_VERSIONS.findCurrent;
export const findPolicyVersion = POLICY_VERSIONS.findVersion;
/** Newest first, served by the primary key. */
export const listPolicyVersions = POLICY_VERSIONS.listVersions;
/** Serialises policy writers of one organization for the rest of the transaction. */
export const lockPolicyWrites = POLICY_VERSIONS.lockWrites;

/**
 * Writes the next version. The primary key makes two writers racing for one version number fail the
 * second (a unique violation the caller reports), so versions never fork.
 */
export async function insertPolicyVersion(db: Queryable, policy: Policy): Promise<void> {
  await db.query(
    `INSERT INTO policy_versions (${COLUMNS}) VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7)`,
    [
      policy.organizationId,
      policy.version,
      ...storedRules(policy),
      policy.createdBy,
      policy.approvalId,
      policy.createdAt,
    ],
  );
}

// ---- proposed changes waiting for approval ----

export type PolicyChangeStatus = 'pending_approval' | 'applied' | 'rejected' | 'expired' | 'superseded';

export interface PolicyChange {
  id: string;
  organizationId: string;
  status: PolicyChangeStatus;
  baseVersion: number;
  appliedVersion: number | null;
  rules: Policy['rules'];
  defaultRule: Policy['defaultRule'];
  createdBy: string;
  createdAt: Date;
  decidedAt: Date | null;
}

const CHANGE_COLUMNS =
  'id, organization_id, status, base_version, applied_version, rules, default_rule, created_by, created_at, decided_at';

function changeFromRow(row: Record<string, unknown>): PolicyChange {
  const { rules, defaultRule } = rulesOfRow(row);
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    status: row.status as PolicyChangeStatus,
    baseVersion: Number(row.base_version),
    appliedVersion: nullableNumber(row.applied_version),
    rules,
    defaultRule,
    createdBy: String(row.created_by),
    createdAt: toDate(row.created_at),
    decidedAt: nullableDate(row.decided_at),
  };
}

export async function insertPolicyChange(db: Queryable, change: PolicyChange): Promise<void> {
  await db.query(
    `INSERT INTO policy_changes (${CHANGE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10)`,
    [
      change.id,
      change.organizationId,
      change.status,
      change.baseVersion,
      change.appliedVersion,
      ...storedRules(change),
      change.createdBy,
      change.createdAt,
      change.decidedAt,
    ],
  );
}

const POLICY_CHANGES: RecordTable<PolicyChange> = {
  name: 'policy_changes',
  columns: CHANGE_COLUMNS,
  prefix: ID_PREFIXES.policyChange,
  fromRow: changeFromRow,
};

export const findPolicyChange = organizationRecordFinder(POLICY_CHANGES);

export async function savePolicyChange(db: Queryable, change: PolicyChange): Promise<void> {
  await db.query(
    'UPDATE policy_changes SET status = $2, applied_version = $3, decided_at = $4 WHERE id = $1',
    [change.id, change.status, change.appliedVersion, change.decidedAt],
  );
}

/** Newest first, served by (organization_id, id). */
export const listPolicyChanges = newestFirstLister(POLICY_CHANGES);
