/**
 * Launch gates, pure: the checks an organization must pass before pilot or production keys are issued, per
 * product, each decided from facts the sandbox holds (docs/GOING-LIVE.md). Two kinds: gates over what stands
 * now (the legal entity's KYB, the named contacts, the policy) follow their facts both ways; gates over
 * something that happened (a webhook endpoint acknowledged a signed test event, the scenario ran, a
 * statement was reconciled) stay passed once seen, since the facts behind them may be pruned or move on
 * (a timed-out transfer is settled later).
 */
import type { EvidenceValue } from '../../domain/evidence.ts';
import {
  CONTACT_ROLES,
  type Contact,
  DEFAULT_LAUNCH_PRODUCTS,
  type LaunchProduct,
  PRODUCT_RAILS,
} from '../../domain/organizationProfile.ts';

/** Every product's gates, in the order they are listed. */
export const LAUNCH_GATES = [
  'business_verified',
  'contacts_named',
  'policies_configured',
  'webhook_endpoint_verified',
  'sandbox_scenario_completed',
  'reconciliation_run',
] as const;
export type LaunchGate = (typeof LAUNCH_GATES)[number];

/** Gates over something that happened: once passed, they stay passed. */
export const HISTORICAL_LAUNCH_GATES: readonly LaunchGate[] = [
  'webhook_endpoint_verified',
  'sandbox_scenario_completed',
  'reconciliation_run',
];

/** `overridden`: an operator issued keys past an open gate, recorded as evidence where the keys are issued. */
export const LAUNCH_GATE_STATES = ['open', 'passed', 'overridden'] as const;
export type LaunchGateState = (typeof LAUNCH_GATE_STATES)[number];

/** The outcomes a product's sandbox scenario must show: the sandbox rails' magic values and a return. */
export const SCENARIO_OUTCOMES = ['settled', 'failed', 'timed_out', 'returned'] as const;
export type ScenarioOutcome = (typeof SCENARIO_OUTCOMES)[number];

/** The organization's legal entity: the business customer whose KYB stands for the organization. */
export interface LegalEntityFacts {
  customerId: string;
  customerType: string;
  kycStatus: string;
  /** Its latest verification, if it submitted one. */
  verification: { id: string; status: string; decidedBy: string | null; decidedAt: Date | null } | null;
}

export interface ScenarioFact {
  transferId: string;
  at: Date;
}

/** What the sandbox holds for one organization, read once per evaluation. */
export interface LaunchGateFacts {
  products: readonly LaunchProduct[];
  legalEntity: LegalEntityFacts | null;
  contacts: readonly (Contact & { updatedAt: Date })[];
  /** The current authorization policy; `createdBy` is `system` for the version every organization starts with. */
  policy: { version: number; rules: number; createdBy: string; createdAt: Date } | null;
  /** The first delivery of a test event that an endpoint answered 2xx; undefined when not looked up. */
  webhookAcknowledgement?: {
    deliveryId: string;
    subscriptionId: string;
    url: string;
    eventId: string;
    eventType: string;
    statusCode: number | null;
    at: Date;
  } | null;
  /** Per product, the first transfer seen in each outcome; a product not looked up is absent. */
  scenario: Partial<Record<LaunchProduct, Partial<Record<ScenarioOutcome, ScenarioFact>>>>;
  /** Per product, the first statement imported for one of its rails; a product not looked up is absent. */
  reconciliation: Partial<
    Record<
      LaunchProduct,
      {
        statementId: string;
        rail: string;
        lines: number;
        matched: number;
        exceptions: number;
        at: Date;
      } | null
    >
  >;
}

type Evidence = { readonly [key: string]: EvidenceValue };

/** A gate as a deployment records it. */
export interface RecordedLaunchGate {
  product: LaunchProduct;
  gate: LaunchGate;
  state: LaunchGateState;
  evidence: Evidence;
  /** When the state last changed (for a passed gate: when what passed it happened). */
  updatedAt: Date;
  /** The evidence chain's record of the last change. */
  evidenceRecordId: string | null;
}

export interface LaunchGateDecision {
  product: LaunchProduct;
  gate: LaunchGate;
  state: 'open' | 'passed';
  evidence: Evidence;
  /** For a passed gate, when the fact that passed it happened; for an open one, undefined. */
  passedAt: Date | undefined;
}

/** The gates a recorded state no longer needs to look up: historical gates already passed. */
export function settledHistoricalGates(recorded: readonly RecordedLaunchGate[]): Set<string> {
  return new Set(
    recorded
      .filter((r) => r.state === 'passed' && HISTORICAL_LAUNCH_GATES.includes(r.gate))
      .map((r) => gateKey(r.product, r.gate)),
  );
}

export function gateKey(product: LaunchProduct, gate: LaunchGate): string {
  return `${product}/${gate}`;
}

/** What a gate's rule decides of it. */
type GateOutcome = Omit<LaunchGateDecision, 'product' | 'gate'>;

const iso = (d: Date) => d.toISOString();
const latest = (dates: readonly Date[]) => new Date(Math.max(...dates.map((d) => d.getTime())));

function businessVerified(facts: LaunchGateFacts): GateOutcome {
  const entity = facts.legalEntity;
  if (!entity) return { state: 'open', evidence: { missing: ['legal_entity'] }, passedAt: undefined };
  const v = entity.verification;
  const base = { legal_entity: entity.customerId, kyc_status: entity.kycStatus };
  if (entity.customerType !== 'business') {
    return { state: 'open', evidence: { ...base, missing: ['business_customer'] }, passedAt: undefined };
  }
  if (entity.kycStatus !== 'verified' || v?.status !== 'verified' || !v.decidedAt) {
    return {
      state: 'open',
      evidence: { ...base, verification: v?.id ?? null, missing: ['kyb_verified'] },
      passedAt: undefined,
    };
  }
  return {
    state: 'passed',
    evidence: { ...base, verification: v.id, decided_by: v.decidedBy, decided_at: iso(v.decidedAt) },
    passedAt: v.decidedAt,
  };
}

function contactsNamed(facts: LaunchGateFacts): GateOutcome {
  const named = new Map(facts.contacts.map((c) => [c.role, c]));
  const missing = CONTACT_ROLES.filter((role) => !named.has(role));
  const contacts: Record<string, string> = {};
  for (const role of CONTACT_ROLES) {
    const c = named.get(role);
    if (c) contacts[role] = c.email;
  }
  if (missing.length > 0) return { state: 'open', evidence: { contacts, missing }, passedAt: undefined };
  return {
    state: 'passed',
    evidence: { contacts },
    passedAt: latest(facts.contacts.map((c) => c.updatedAt)),
  };
}

function policiesConfigured(facts: LaunchGateFacts): GateOutcome {
  const p = facts.policy;
  // Version 1 is the one the service writes for every organization (no rules, everything allowed).
  if (!p || p.createdBy === 'system') {
    return {
      state: 'open',
      evidence: { policy_version: p?.version ?? null, missing: ['policy'] },
      passedAt: undefined,
    };
  }
  return {
    state: 'passed',
    evidence: { policy_version: p.version, rules: p.rules, created_by: p.createdBy },
    passedAt: p.createdAt,
  };
}

function webhookVerified(facts: LaunchGateFacts): GateOutcome {
  const ack = facts.webhookAcknowledgement;
  if (!ack) return { state: 'open', evidence: { missing: ['acknowledged_test_event'] }, passedAt: undefined };
  return {
    state: 'passed',
    evidence: {
      subscription: ack.subscriptionId,
      url: ack.url,
      event: ack.eventId,
      event_type: ack.eventType,
      delivery: ack.deliveryId,
      status_code: ack.statusCode,
      acknowledged_at: iso(ack.at),
    },
    passedAt: ack.at,
  };
}

function scenarioCompleted(
  product: LaunchProduct,
  facts: LaunchGateFacts,
  previous: RecordedLaunchGate | undefined,
): GateOutcome {
  // Each outcome, once seen, is kept: a timed-out transfer settled since still showed the time-out.
  const seen: Record<string, { transfer: string; at: string }> = {};
  const before = previous?.evidence ?? {};
  for (const outcome of SCENARIO_OUTCOMES) {
    const earlier = before[outcome] as { transfer: string; at: string } | undefined;
    const now = facts.scenario[product]?.[outcome];
    if (earlier && typeof earlier === 'object' && typeof earlier.transfer === 'string')
      seen[outcome] = earlier;
    else if (now) seen[outcome] = { transfer: now.transferId, at: iso(now.at) };
  }
  const missing = SCENARIO_OUTCOMES.filter((o) => !seen[o]);
  const evidence = { rails: [...PRODUCT_RAILS[product]], ...seen };
  if (missing.length > 0) return { state: 'open', evidence: { ...evidence, missing }, passedAt: undefined };
  return {
    state: 'passed',
    evidence,
    passedAt: latest(Object.values(seen).map((s) => new Date(s.at))),
  };
}

function reconciliationRun(product: LaunchProduct, facts: LaunchGateFacts): GateOutcome {
  const statement = facts.reconciliation[product];
  if (!statement) {
    return {
      state: 'open',
      evidence: { rails: [...PRODUCT_RAILS[product]], missing: ['statement_imported'] },
      passedAt: undefined,
    };
  }
  return {
    state: 'passed',
    evidence: {
      statement: statement.statementId,
      rail: statement.rail,
      lines: statement.lines,
      matched: statement.matched,
      exceptions: statement.exceptions,
      imported_at: iso(statement.at),
    },
    passedAt: statement.at,
  };
}

function kept(previous: RecordedLaunchGate): GateOutcome {
  return { state: 'passed', evidence: previous.evidence, passedAt: previous.updatedAt };
}

/** How a gate is decided for a product, over the facts and what was recorded of it before. */
type GateRule = (
  product: LaunchProduct,
  facts: LaunchGateFacts,
  previous: RecordedLaunchGate | undefined,
) => GateOutcome;

/** Each gate's rule; a historical gate already passed is kept without asking it (evaluateLaunchGates). */
const GATE_RULES: Readonly<Record<LaunchGate, GateRule>> = {
  business_verified: (_product, facts) => businessVerified(facts),
  contacts_named: (_product, facts) => contactsNamed(facts),
  policies_configured: (_product, facts) => policiesConfigured(facts),
  webhook_endpoint_verified: (_product, facts) => webhookVerified(facts),
  sandbox_scenario_completed: scenarioCompleted,
  reconciliation_run: reconciliationRun,
};

/**
 * Every gate of every product the organization launches, decided over its facts and what was recorded
 * before (historical gates stay passed; the scenario keeps each outcome it saw).
 */
export function evaluateLaunchGates(
  facts: LaunchGateFacts,
  recorded: readonly RecordedLaunchGate[],
): LaunchGateDecision[] {
  const before = new Map(recorded.map((r) => [gateKey(r.product, r.gate), r]));
  return facts.products.flatMap((product) =>
    LAUNCH_GATES.map((gate): LaunchGateDecision => {
      const previous = before.get(gateKey(product, gate));
      const decided =
        previous?.state === 'passed' && HISTORICAL_LAUNCH_GATES.includes(gate)
          ? kept(previous)
          : GATE_RULES[gate](product, facts, previous);
      return { product, gate, ...decided };
    }),
  );
}

/** An operator's override of one gate, where keys are issued. */
export interface LaunchGateOverride {
  product: LaunchProduct;
  gate: LaunchGate;
  reason: string;
  evidenceRecordId: string;
  createdAt: Date;
}

/** Where the gates a deployment shows come from: the sandbox's record, or why it cannot be read. */
export type LaunchGateSource =
  | {
      kind: 'recorded';
      organizationId: string;
      products: readonly LaunchProduct[];
      gates: readonly RecordedLaunchGate[];
    }
  | { kind: 'unavailable'; reason: 'sandbox_not_linked' | 'no_sandbox_organization' };

export interface LaunchGateView extends RecordedLaunchGate {
  override: { reason: string; at: Date; evidenceRecordId: string } | null;
}

/**
 * The gates as a deployment shows them: the sandbox's recorded state of each gate of each product, open
 * when the sandbox has not recorded it (or cannot be read), overridden when an operator overrode it here.
 */
export function launchGateView(
  source: LaunchGateSource,
  overrides: readonly LaunchGateOverride[],
  now: Date,
): LaunchGateView[] {
  const recorded = new Map(
    source.kind === 'recorded' ? source.gates.map((g) => [gateKey(g.product, g.gate), g]) : [],
  );
  const overridden = new Map(overrides.map((o) => [gateKey(o.product, o.gate), o]));
  const products = source.kind === 'recorded' ? source.products : DEFAULT_LAUNCH_PRODUCTS;
  return products.flatMap((product) =>
    LAUNCH_GATES.map((gate): LaunchGateView => {
      const key = gateKey(product, gate);
      const row = recorded.get(key);
      const o = overridden.get(key);
      const base: RecordedLaunchGate = row ?? {
        product,
        gate,
        state: 'open',
        evidence: { missing: [source.kind === 'unavailable' ? source.reason : 'not_evaluated'] },
        updatedAt: now,
        evidenceRecordId: null,
      };
      const override = o ? { reason: o.reason, at: o.createdAt, evidenceRecordId: o.evidenceRecordId } : null;
      if (base.state === 'open' && o) {
        return {
          ...base,
          state: 'overridden',
          updatedAt: o.createdAt,
          evidenceRecordId: o.evidenceRecordId,
          override,
        };
      }
      return { ...base, override };
    }),
  );
}

/** The gates still open, named `product/gate`. */
export function openGateNames(
  view: readonly { product: LaunchProduct; gate: LaunchGate; state: LaunchGateState }[],
): string[] {
  return view.filter((g) => g.state === 'open').map((g) => gateKey(g.product, g.gate));
}
