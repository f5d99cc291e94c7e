/** AML rules (one set per organization, claimed once) and the alerts they open: written, found and listed. */
import type { AmlAlert, AmlAlertStatus } from '../../../domain/amlAlerts.ts';
import type { AmlAction, AmlRule, AmlRuleType } from '../../../domain/decisions/aml.ts';
import { amlParametersFromStored, storedAmlParameters } from '../../../domain/decisions/amlRuleParameters.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  allOrganizationRecordsLister,
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
  rowTable,
} from '../../../store/repositories/records.ts';
import { computedFrom, stored } from '../../../store/repositories/rowMappers.ts';
import {
  fieldArrays,
  isTrue,
  type KeysetFilter,
  nullableDate,
  nullableText,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

/** A rule's parameters are stored as its type, its currency and the rest as jsonb. */
const RULES = rowTable<AmlRule>('aml_rules', {
  id: String,
  organizationId: String,
  name: String,
  parameters: computedFrom(['type', 'currency', 'parameters'], (row) =>
    amlParametersFromStored({
      ...toJsonObject<Record<string, unknown>>(row.parameters),
      type: row.type,
      currency: row.currency,
    }),
  ),
  action: stored,
  enabled: isTrue,
  version: Number,
  createdAt: toDate,
  updatedAt: toDate,
});

/** Claims the organization's rule set; true when this call created it (and must write its rules). */
export async function claimAmlRuleSet(db: Queryable, organizationId: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO aml_rule_sets (organization_id, created_at) VALUES ($1, $2)
     ON CONFLICT (organization_id) DO NOTHING RETURNING organization_id`,
    [organizationId, now],
  );
  return rows.length === 1;
}

export async function hasAmlRuleSet(db: Queryable, organizationId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM aml_rule_sets WHERE organization_id = $1', [organizationId]);
  return rows.length === 1;
}

function ruleParams(rule: AmlRule): unknown[] {
  const { type, currency, ...rest } = storedAmlParameters(rule.parameters);
  return [
    rule.id,
    rule.organizationId,
    rule.name,
    type,
    currency,
    JSON.stringify(rest),
    rule.action,
    rule.enabled,
    rule.version,
    rule.createdAt,
    rule.updatedAt,
  ];
}

export async function insertAmlRule(db: Queryable, rule: AmlRule): Promise<void> {
  await db.query(
    `INSERT INTO aml_rules (${RULES.columns}) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11)`,
    ruleParams(rule),
  );
}

export async function updateAmlRule(db: Queryable, rule: AmlRule): Promise<void> {
  const [id, , name, , currency, parameters, action, enabled, version, , updatedAt] = ruleParams(rule);
  await db.query(
    `UPDATE aml_rules SET name = $2, currency = $3, parameters = $4::jsonb, action = $5, enabled = $6,
            version = $7, updated_at = $8 WHERE id = $1`,
    [id, name, currency, parameters, action, enabled, version, updatedAt],
  );
}

/** An organization's rules in creation order (the order they are evaluated and listed in). */
export const listAmlRules = allOrganizationRecordsLister(RULES, 'id');

export const findAmlRule = organizationRecordFinder(RULES);

const AML_ALERTS = recordTable<AmlAlert>('aml_alerts', ID_PREFIXES.amlAlert, {
  id: String,
  organizationId: String,
  ruleId: String,
  ruleType: stored,
  ruleVersion: Number,
  action: stored,
  transferId: nullableText,
  walletId: String,
  customerId: String,
  status: stored,
  reason: String,
  observed: toJsonObject<Record<string, string | number>>,
  disposition: stored,
  note: nullableText,
  resolvedBy: nullableText,
  createdAt: toDate,
  resolvedAt: nullableDate,
  conversionQuoteId: nullableText,
});

/**
 * Opens alerts with one statement; an alert for a wallet and rule that already has one open is skipped
 * (the unique index decides, across processes). Returns the alerts opened.
 */
export async function insertAmlAlerts(db: Queryable, alerts: readonly AmlAlert[]): Promise<AmlAlert[]> {
  if (alerts.length === 0) return [];
  const rows = await db.query(
    `INSERT INTO aml_alerts (id, organization_id, rule_id, rule_type, rule_version, action, transfer_id, wallet_id,
                             customer_id, status, reason, observed, created_at, conversion_quote_id)
     SELECT v.id, v.organization_id, v.rule_id, v.rule_type, v.rule_version, v.action, v.transfer_id, v.wallet_id,
            v.customer_id, 'open', v.reason, v.observed::jsonb, v.created_at, v.conversion_quote_id
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[],
                   $9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::text[])
         AS v(id, organization_id, rule_id, rule_type, rule_version, action, transfer_id, wallet_id, customer_id,
              reason, observed, created_at, conversion_quote_id)
     ON CONFLICT (wallet_id, rule_id) WHERE status = 'open' DO NOTHING
     RETURNING id`,
    [
      ...fieldArrays(
        alerts,
        'id',
        'organizationId',
        'ruleId',
        'ruleType',
        'ruleVersion',
        'action',
        'transferId',
        'walletId',
        'customerId',
        'reason',
      ),
      alerts.map((a) => JSON.stringify(a.observed)),
      alerts.map((a) => a.createdAt.toISOString()),
      alerts.map((a) => a.conversionQuoteId),
    ],
  );
  const opened = new Set(rows.map((r) => String(r.id)));
  return alerts.filter((a) => opened.has(a.id));
}

export const findAmlAlert = organizationRecordFinder(AML_ALERTS);

export async function saveAmlAlertResolution(db: Queryable, alert: AmlAlert): Promise<void> {
  await db.query(
    `UPDATE aml_alerts SET status = $2, disposition = $3, note = $4, resolved_by = $5, resolved_at = $6
      WHERE id = $1`,
    [alert.id, alert.status, alert.disposition, alert.note, alert.resolvedBy, alert.resolvedAt],
  );
}

export interface AmlAlertFilter extends KeysetFilter {
  status?: AmlAlertStatus | undefined;
  ruleType?: AmlRuleType | undefined;
  action?: AmlAction | undefined;
  walletId?: string | undefined;
  customerId?: string | undefined;
  transferId?: string | undefined;
}

/** Newest first; each filter has an index beginning with the organization. */
export const listAmlAlerts = newestFirstLister(
  AML_ALERTS,
  byFields<AmlAlertFilter>('status', 'ruleType', 'action', 'walletId', 'customerId', 'transferId'),
);

/** Open alerts per customer, for the risk level. */
export async function countOpenAmlAlerts(
  db: Queryable,
  organizationId: string,
  customerId: string,
): Promise<number> {
  const [row] = await db.query(
    `SELECT count(*)::int AS n FROM aml_alerts WHERE organization_id = $1 AND customer_id = $2 AND status = 'open'`,
    [organizationId, customerId],
  );
  return Number(row?.n ?? 0);
}
