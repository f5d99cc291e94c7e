/**
 * Launch gates as recorded, operators' overrides, and the facts the gates are decided over: reads of the
 * sandbox's customers, verifications, policies, webhook deliveries, transfers and statements.
 */
import type { EvidenceValue } from '../../domain/evidence.ts';
import type { LaunchProduct } from '../../domain/organizationProfile.ts';
import type { Rail } from '../../domain/transfers.ts';
import { allOrganizationRecordsLister, rowTable } from '../../store/repositories/records.ts';
import { column, computed, rowMapper, stored } from '../../store/repositories/rowMappers.ts';
import {
  fieldArrays,
  nullableDate,
  nullableNumber,
  nullableText,
  toDate,
  toJsonObject,
} from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';
import type {
  LaunchGate,
  LaunchGateFacts,
  LaunchGateOverride,
  LegalEntityFacts,
  RecordedLaunchGate,
  ScenarioFact,
  ScenarioOutcome,
} from './domain.ts';
import type { ConfiguredProvider } from './providers.ts';

const GATES = rowTable<RecordedLaunchGate>('launch_gates', {
  product: stored,
  gate: stored,
  state: stored,
  evidence: toJsonObject<{ readonly [key: string]: EvidenceValue }>,
  evidenceRecordId: nullableText,
  updatedAt: toDate,
});

export const listGateRows = allOrganizationRecordsLister(GATES, 'product, gate');

/**
 * Locks the organization's gate rows until commit, creating the missing ones as open (a first evaluation
 * then decides them), so that concurrent evaluations of one organization queue rather than both announce
 * one change. Rows are taken in key order.
 */
export async function lockGateRows(
  db: Queryable,
  organizationId: string,
  keys: readonly { product: LaunchProduct; gate: LaunchGate }[],
  now: Date,
): Promise<RecordedLaunchGate[]> {
  await db.query(
    `INSERT INTO launch_gates (organization_id, product, gate, state, evidence, updated_at, checked_at)
     SELECT $1, k.product, k.gate, 'open', '{}'::jsonb, $4, $4
       FROM unnest($2::text[], $3::text[]) AS k(product, gate)
      ORDER BY k.product, k.gate
     ON CONFLICT (organization_id, product, gate) DO NOTHING`,
    [organizationId, ...fieldArrays(keys, 'product', 'gate'), now],
  );
  const rows = await db.query(
    `SELECT ${GATES.columns} FROM launch_gates WHERE organization_id = $1 ORDER BY product, gate FOR UPDATE`,
    [organizationId],
  );
  return rows.map(GATES.fromRow);
}

/** Writes gates decided by an evaluation (rows locked by lockGateRows), all marked checked now. */
export async function saveGateRows(
  db: Queryable,
  organizationId: string,
  rows: readonly RecordedLaunchGate[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `UPDATE launch_gates g
        SET state = v.state, evidence = v.evidence::jsonb, evidence_record_id = v.evidence_record_id,
            updated_at = v.updated_at, checked_at = $7
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $8::timestamptz[])
         AS v(product, gate, state, evidence, evidence_record_id, updated_at)
      WHERE g.organization_id = $1 AND g.product = v.product AND g.gate = v.gate`,
    [
      organizationId,
      ...fieldArrays(rows, 'product', 'gate', 'state'),
      rows.map((r) => JSON.stringify(r.evidence)),
      rows.map((r) => r.evidenceRecordId),
      now,
      rows.map((r) => r.updatedAt),
    ],
  );
}

const OVERRIDES = rowTable<LaunchGateOverride>('launch_gate_overrides', {
  product: stored,
  gate: stored,
  reason: String,
  evidenceRecordId: String,
  createdAt: toDate,
});

export const listOverrides = allOrganizationRecordsLister(OVERRIDES, 'product, gate');

export async function insertOverrides(
  db: Queryable,
  organizationId: string,
  overrides: readonly LaunchGateOverride[],
): Promise<void> {
  if (overrides.length === 0) return;
  await db.query(
    `INSERT INTO launch_gate_overrides (organization_id, product, gate, reason, evidence_record_id, created_at)
     SELECT $1, o.product, o.gate, o.reason, o.evidence_record_id, o.created_at
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
         AS o(product, gate, reason, evidence_record_id, created_at)`,
    [organizationId, ...fieldArrays(overrides, 'product', 'gate', 'reason', 'evidenceRecordId', 'createdAt')],
  );
}

const legalEntityVerificationFromRow = rowMapper<NonNullable<LegalEntityFacts['verification']>>({
  id: column('verification_id', String),
  status: String,
  decidedBy: nullableText,
  decidedAt: nullableDate,
});

const legalEntityFromRow = rowMapper<LegalEntityFacts>({
  customerId: column('id', String),
  customerType: column('type', String),
  kycStatus: String,
  verification: computed((row) =>
    row.verification_id === null ? null : legalEntityVerificationFromRow(row),
  ),
});

/** The legal entity and its latest verification; undefined when the customer is not the organization's. */
export async function findLegalEntityFacts(
  db: Queryable,
  organizationId: string,
  customerId: string,
): Promise<LegalEntityFacts | undefined> {
  const [row] = await db.query(
    `SELECT c.id, c.type, c.kyc_status, v.id AS verification_id, v.status, v.decided_by, v.decided_at
       FROM customers c
       LEFT JOIN LATERAL (
         SELECT id, status, decided_by, decided_at FROM verifications
          WHERE organization_id = c.organization_id AND customer_id = c.id
          ORDER BY id DESC LIMIT 1) v ON true
      WHERE c.organization_id = $1 AND c.id = $2`,
    [organizationId, customerId],
  );
  return row && legalEntityFromRow(row);
}

const policySummaryFromRow = rowMapper<NonNullable<LaunchGateFacts['policy']>>({
  version: Number,
  rules: Number,
  createdBy: String,
  createdAt: toDate,
});

/** The current policy version in brief; undefined before the organization's policy was first needed. */
export async function findPolicySummary(
  db: Queryable,
  organizationId: string,
): Promise<LaunchGateFacts['policy'] | undefined> {
  const [row] = await db.query(
    `SELECT version, jsonb_array_length(rules) AS rules, created_by, created_at FROM policy_versions
      WHERE organization_id = $1 ORDER BY version DESC LIMIT 1`,
    [organizationId],
  );
  return row && policySummaryFromRow(row);
}

const acknowledgementFromRow = rowMapper<NonNullable<LaunchGateFacts['webhookAcknowledgement']>>({
  deliveryId: column('id', String),
  subscriptionId: String,
  url: String,
  eventId: String,
  eventType: column('type', String),
  statusCode: column('last_status_code', nullableNumber),
  at: column('succeeded_at', toDate),
});

/**
 * The first delivery of a test event (one emitted with POST /v1/sandbox/events or `mkoba trigger`: no
 * resource, marked `test_event`) that one of the organization's endpoints answered with a 2xx.
 */
export async function findAcknowledgedTestEvent(
  db: Queryable,
  organizationId: string,
): Promise<NonNullable<LaunchGateFacts['webhookAcknowledgement']> | undefined> {
  const [row] = await db.query(
    `SELECT d.id, d.subscription_id, s.url, d.event_id, e.type, d.last_status_code, d.succeeded_at
       FROM webhook_subscriptions s
       JOIN webhook_deliveries d ON d.subscription_id = s.id AND d.status = 'succeeded'
       JOIN events e ON e.id = d.event_id
      WHERE s.organization_id = $1 AND e.resource_id IS NULL
        AND (e.data->>'test_event' = 'true' OR e.data->'metadata'->>'test_event' = 'true')
      ORDER BY d.succeeded_at, d.id
      LIMIT 1`,
    [organizationId],
  );
  return row && acknowledgementFromRow(row);
}

/**
 * A payout on these rails in each of the outcomes asked for: settled (or settled and later returned),
 * failed, left processing by a rail time-out, returned. One statement; each branch stops at its first row
 * (the rarer outcomes through their partial indexes).
 */
export async function findScenarioOutcomes(
  db: Queryable,
  organizationId: string,
  rails: readonly Rail[],
  outcomes: readonly ScenarioOutcome[],
): Promise<Partial<Record<ScenarioOutcome, ScenarioFact>>> {
  const branches: Record<ScenarioOutcome, string> = {
    settled: `SELECT 'settled' AS outcome, id, settled_at AS at FROM transfers
                WHERE organization_id = $1 AND rail = ANY($2::text[]) AND direction = 'outbound'
                  AND settled_at IS NOT NULL ORDER BY id DESC LIMIT 1`,
    failed: `SELECT 'failed' AS outcome, id, failed_at AS at FROM transfers
               WHERE organization_id = $1 AND rail = ANY($2::text[]) AND direction = 'outbound'
                 AND status = 'failed' LIMIT 1`,
    timed_out: `SELECT 'timed_out' AS outcome, id, updated_at AS at FROM transfers
                  WHERE organization_id = $1 AND rail = ANY($2::text[]) AND direction = 'outbound'
                    AND status_reason = 'rail_timeout' LIMIT 1`,
    returned: `SELECT 'returned' AS outcome, id, returned_at AS at FROM transfers
                 WHERE organization_id = $1 AND rail = ANY($2::text[]) AND direction = 'outbound'
                   AND status = 'returned' LIMIT 1`,
  };
  if (outcomes.length === 0) return {};
  const rows = await db.query(outcomes.map((o) => `(${branches[o]})`).join(' UNION ALL '), [
    organizationId,
    rails,
  ]);
  const found: Partial<Record<ScenarioOutcome, ScenarioFact>> = {};
  for (const row of rows) {
    found[row.outcome as ScenarioOutcome] = { transferId: String(row.id), at: toDate(row.at) };
  }
  return found;
}

const statementFactFromRow = rowMapper<NonNullable<LaunchGateFacts['reconciliation'][LaunchProduct]>>({
  statementId: column('id', String),
  rail: String,
  lines: column('line_count', Number),
  matched: column('matched_count', Number),
  exceptions: column('exception_count', Number),
  at: column('created_at', toDate),
});

/** The first statement imported for one of these rails. */
export async function findFirstStatement(
  db: Queryable,
  organizationId: string,
  rails: readonly Rail[],
): Promise<NonNullable<LaunchGateFacts['reconciliation'][LaunchProduct]> | undefined> {
  const [row] = await db.query(
    `SELECT id, rail, line_count, matched_count, exception_count, created_at FROM reconciliation_statements
      WHERE organization_id = $1 AND rail = ANY($2::text[]) ORDER BY id LIMIT 1`,
    [organizationId, rails],
  );
  return row && statementFactFromRow(row);
}

/** What a gate reads of a rail partner configuration (no credentials). */
const PROVIDERS = rowTable<ConfiguredProvider>('rail_partner_configs', {
  partner: String,
  rail: stored,
  network: nullableText,
  status: String,
  settings: toJsonObject<Record<string, string>>,
});

/** The rail partners an organization configured in this deployment, active or not (no credentials read). */
export const listConfiguredProviders = allOrganizationRecordsLister(PROVIDERS, 'id');
