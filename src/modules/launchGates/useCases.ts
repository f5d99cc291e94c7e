/**
 * Launch gates. The sandbox, where an organization integrates, evaluates them: it reads the facts in one
 * transaction with the organization's gate rows locked, decides every gate with src/modules/launchGates/domain.ts,
 * and records each change of state with its `launch_gate.updated` event and its evidence. Pilot and
 * production hold none of those facts (a deployment serves one environment and owns its database): they
 * read the sandbox's record of the organization of the same name through MKOBA_SANDBOX_DATABASE_URL, add
 * the overrides their operators recorded, and refuse keys while a gate is open (docs/GOING-LIVE.md).
 *
 * Past 400 lines: the sandbox's evaluation and pilot/production's reading of it (with the deployment's own
 * rail-provider check, decided where the key is asked for) are one record's two sides.
 */

import type { Deps } from '../../app/deps.ts';
import { newEvent, recordEvents } from '../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../app/evidence.ts';
import { isLiveEnvironment, type Scope } from '../../domain/access.ts';
import { AppError, validationError } from '../../domain/errors.ts';
import type { EventRecord } from '../../domain/events.ts';
import type { EvidenceDraft } from '../../domain/evidence.ts';
import {
  DEFAULT_LAUNCH_PRODUCTS,
  type LaunchProduct,
  PRODUCT_RAILS,
} from '../../domain/organizationProfile.ts';
import { requiredText } from '../../domain/requiredText.ts';
import { findProfile, listContacts } from '../../store/repositories/organizationProfiles.ts';
import {
  findOrganization,
  findOrganizationByName,
  lockOrganization,
} from '../../store/repositories/organizations.ts';
import type { Queryable, Store } from '../../store/store.ts';
import { ensureOrganizationNamed } from '../organization/index.ts';
import {
  evaluateLaunchGates as decideLaunchGates,
  gateKey,
  LAUNCH_GATES,
  type LaunchGate,
  type LaunchGateFacts,
  type LaunchGateSource,
  type LaunchGateView,
  launchGateView,
  openGateNames,
  type RecordedLaunchGate,
  SCENARIO_OUTCOMES,
  settledHistoricalGates,
} from './domain.ts';
import { keyMayMoveMoney, railProviderGatesBeside } from './providerGate.ts';
import { openProviderGateNames, RAIL_PROVIDERS_GATE, sandboxOnlyNotes } from './providers.ts';
import {
  findAcknowledgedTestEvent,
  findFirstStatement,
  findLegalEntityFacts,
  findPolicySummary,
  findScenarioOutcomes,
  insertOverrides,
  listGateRows,
  listOverrides,
  lockGateRows,
  saveGateRows,
} from './repository.ts';

/** What a client is told to wait after the sandbox's database could not be read. */
export const LAUNCH_GATE_SOURCE_RETRY_AFTER_SECONDS = 5;
/** The longest reason an operator may give for an override. */
export const LAUNCH_GATE_OVERRIDE_REASON_CHARS_MAX = 500;

/** What the sandbox holds for the gates still to decide (historical gates already passed are not read again). */
async function readFacts(
  tx: Queryable,
  organizationId: string,
  products: readonly LaunchProduct[],
  recorded: readonly RecordedLaunchGate[],
): Promise<LaunchGateFacts> {
  const settled = settledHistoricalGates(recorded);
  const pending = (product: LaunchProduct, gate: LaunchGate) => !settled.has(gateKey(product, gate));
  const legalEntityId = (await findProfile(tx, organizationId))?.legalEntityId ?? null;
  const legalEntity = legalEntityId
    ? ((await findLegalEntityFacts(tx, organizationId, legalEntityId)) ?? null)
    : null;
  const facts: LaunchGateFacts = {
    products,
    legalEntity,
    contacts: await listContacts(tx, organizationId),
    policy: (await findPolicySummary(tx, organizationId)) ?? null,
    scenario: {},
    reconciliation: {},
  };
  if (products.some((p) => pending(p, 'webhook_endpoint_verified'))) {
    facts.webhookAcknowledgement = (await findAcknowledgedTestEvent(tx, organizationId)) ?? null;
  }
  const before = new Map(recorded.map((r) => [gateKey(r.product, r.gate), r]));
  for (const product of products) {
    if (pending(product, 'sandbox_scenario_completed')) {
      // Outcomes the record already holds are not looked up again.
      const seen = before.get(gateKey(product, 'sandbox_scenario_completed'))?.evidence ?? {};
      const wanted = SCENARIO_OUTCOMES.filter((o) => seen[o] === undefined);
      facts.scenario[product] = await findScenarioOutcomes(
        tx,
        organizationId,
        PRODUCT_RAILS[product],
        wanted,
      );
    }
    if (pending(product, 'reconciliation_run')) {
      facts.reconciliation[product] =
        (await findFirstStatement(tx, organizationId, PRODUCT_RAILS[product])) ?? null;
    }
  }
  return facts;
}

/**
 * Decides one organization's gates over the sandbox's facts and records them, in one transaction: a change
 * of state gets its evidence record and its `launch_gate.updated` event; new evidence without a change of
 * state (the scenario's next outcome) is kept without either. Returns the gates of the products it launches.
 */
export async function evaluateOrganizationGates(
  deps: Deps,
  organizationId: string,
): Promise<{ products: readonly LaunchProduct[]; gates: RecordedLaunchGate[] }> {
  return deps.store.transaction(async (tx) => {
    const now = deps.now();
    const products = (await findProfile(tx, organizationId))?.products ?? DEFAULT_LAUNCH_PRODUCTS;
    const keys = products.flatMap((product) => LAUNCH_GATES.map((gate) => ({ product, gate })));
    const recorded = await lockGateRows(tx, organizationId, keys, now);
    const facts = await readFacts(tx, organizationId, products, recorded);
    const before = new Map(recorded.map((r) => [gateKey(r.product, r.gate), r]));
    const decided = decideLaunchGates(facts, recorded);

    const rows: RecordedLaunchGate[] = [];
    const changes: { row: RecordedLaunchGate; previous: RecordedLaunchGate }[] = [];
    for (const d of decided) {
      const previous = before.get(gateKey(d.product, d.gate)) as RecordedLaunchGate;
      if (previous.state !== d.state) {
        const row: RecordedLaunchGate = {
          ...previous,
          state: d.state,
          evidence: d.evidence,
          updatedAt: d.passedAt ?? now,
        };
        rows.push(row);
        changes.push({ row, previous });
      } else {
        rows.push({ ...previous, evidence: d.evidence });
      }
    }
    if (changes.length > 0) {
      const drafts: EvidenceDraft[] = changes.map(({ row, previous }) => ({
        organizationId,
        kind: 'launch_gate.update',
        actor: SYSTEM_ACTOR,
        data: {
          product: row.product,
          gate: row.gate,
          state: row.state,
          previous_state: previous.state,
          evidence: row.evidence,
          changed_at: row.updatedAt.toISOString(),
        },
      }));
      const records = await appendEvidence(tx, deps, drafts);
      const events: EventRecord[] = changes.map(({ row, previous }, i) => {
        row.evidenceRecordId = records[i]?.id ?? null;
        return gateEvent(deps, organizationId, row, previous.state, now);
      });
      await recordEvents(tx, deps, events);
    }
    // One statement writes every row: each is marked checked now, with its evidence as decided.
    await saveGateRows(tx, organizationId, rows, now);
    return { products, gates: rows };
  });
}

function gateEvent(
  deps: Deps,
  organizationId: string,
  gate: RecordedLaunchGate,
  previousState: string,
  now: Date,
): EventRecord {
  return newEvent(
    deps,
    {
      organizationId,
      type: 'launch_gate.updated',
      resourceId: organizationId,
      data: {
        product: gate.product,
        gate: gate.gate,
        state: gate.state,
        previous_state: previousState,
        evidence: gate.evidence,
        evidence_record: gate.evidenceRecordId,
        updated_at: gate.updatedAt.toISOString(),
      },
    },
    now,
  );
}

/** A read of the sandbox's database that failed: pilot and production say so rather than guess. */
function sourceUnavailable(error: unknown): AppError {
  return new AppError({
    status: 503,
    code: 'service_unavailable',
    title: 'Service unavailable',
    detail: `The sandbox's launch gates could not be read (MKOBA_SANDBOX_DATABASE_URL): ${error instanceof Error ? error.message : String(error)}`,
    retryAfterSeconds: LAUNCH_GATE_SOURCE_RETRY_AFTER_SECONDS,
  });
}

/** The sandbox's record of the organization of this name, read from its database. */
async function recordedInSandbox(source: Store, organizationName: string): Promise<LaunchGateSource> {
  try {
    const organization = await findOrganizationByName(source, organizationName);
    if (!organization) return { kind: 'unavailable', reason: 'no_sandbox_organization' };
    const products = (await findProfile(source, organization.id))?.products ?? DEFAULT_LAUNCH_PRODUCTS;
    return {
      kind: 'recorded',
      organizationId: organization.id,
      products,
      gates: await listGateRows(source, organization.id),
    };
  } catch (error) {
    throw sourceUnavailable(error);
  }
}

export interface LaunchGateListing {
  /** The organization in this deployment; undefined in pilot or production before it exists here. */
  organizationId: string | undefined;
  /** Where the gates were decided: the sandbox's organization of the same name, if found. */
  sandboxOrganizationId: string | undefined;
  gates: LaunchGateView[];
}

/**
 * The gates of an organization as this deployment sees them. The sandbox evaluates (and records) them now;
 * pilot and production read the sandbox's record and add their own overrides.
 */
export async function launchGatesOf(
  deps: Deps,
  organization: { id?: string | undefined; name: string },
): Promise<LaunchGateListing> {
  const now = deps.now();
  const local = organization.id
    ? await findOrganization(deps.store, organization.id)
    : await findOrganizationByName(deps.store, organization.name);
  if (!isLiveEnvironment(deps.environment)) {
    if (!local) return { organizationId: undefined, sandboxOrganizationId: undefined, gates: [] };
    const { products, gates } = await evaluateOrganizationGates(deps, local.id);
    return {
      organizationId: local.id,
      sandboxOrganizationId: local.id,
      gates: launchGateView({ kind: 'recorded', organizationId: local.id, products, gates }, [], now),
    };
  }
  const source: LaunchGateSource = deps.launchGateSource
    ? await recordedInSandbox(deps.launchGateSource, local?.name ?? organization.name)
    : { kind: 'unavailable', reason: 'sandbox_not_linked' };
  const overrides = local ? await listOverrides(deps.store, local.id) : [];
  return {
    organizationId: local?.id,
    sandboxOrganizationId: source.kind === 'recorded' ? source.organizationId : undefined,
    gates: launchGateView(source, overrides, now),
  };
}

/** Why `mkoba keys create` refused: the gates still open, named `product/gate`. */
export class LaunchGatesOpenError extends Error {
  constructor(
    readonly organizationName: string,
    readonly environment: string,
    readonly openGates: readonly string[],
    /** What stays sandbox-only for the products launched (card payouts), said alongside. */
    readonly notes: readonly string[] = [],
  ) {
    super(
      `no ${environment} key for '${organizationName}': ${openGates.length} launch gate(s) open: ${openGates.join(', ')}. ` +
        `See 'mkoba launch-gates list --organization ${JSON.stringify(organizationName)}'; an operator may record an override with 'mkoba launch-gates override'` +
        (openGates.some((g) => g.includes(RAIL_PROVIDERS_GATE))
          ? `; rail partners are configured with an admin key (--scopes admin), which this gate does not hold back.`
          : '.') +
        (notes.length > 0 ? ` Note: ${notes.join('; ')}.` : ''),
    );
    this.name = 'LaunchGatesOpenError';
  }
}

/**
 * Pilot and production keys are issued only once every gate of the organization passed (or was overridden)
 * and, for a key that may move money, every launched product's rails have an active partner here.
 */
export async function requireLaunchGatesPassed(
  deps: Deps,
  organizationName: string,
  scopes?: readonly Scope[] | undefined,
): Promise<void> {
  if (!isLiveEnvironment(deps.environment)) return;
  const { gates } = await launchGatesOf(deps, { name: organizationName });
  const open = openGateNames(gates);
  const providers = await railProviderGatesBeside(deps, organizationName, gates);
  if (keyMayMoveMoney(scopes)) open.push(...openProviderGateNames(providers));
  if (open.length > 0) {
    throw new LaunchGatesOpenError(organizationName, deps.environment, open, sandboxOnlyNotes(providers));
  }
}

export interface OverrideInput {
  organizationName: string;
  reason: string;
  /** Only these gates (all products named, or every product); every open gate when absent. */
  gates?: readonly LaunchGate[] | undefined;
  products?: readonly LaunchProduct[] | undefined;
}

/**
 * An operator's decision to issue keys past open gates, in the deployment that issues them: one evidence
 * record naming the gates and the reason, a `launch_gate.updated` event per gate, and the overrides, in one
 * transaction. Gates already passed or overridden are left as they are. Creates the organization here if
 * it is new (its first key comes after).
 */
export async function overrideLaunchGates(
  deps: Deps,
  input: OverrideInput,
): Promise<{ organizationId: string; overridden: LaunchGateView[] }> {
  checkOverride(deps, input);
  // Read before the transaction: the sandbox's database is another connection, and needs no lock here.
  const { gates: seen } = await launchGatesOf(deps, { name: input.organizationName });
  return deps.store.transaction(async (tx) => {
    const { organization } = await ensureOrganizationNamed(tx, deps, input.organizationName);
    return overrideSeenGates(tx, deps, organization, seen, input);
  });
}

/**
 * The override of an organization that exists here, inside the caller's transaction (an approved
 * `launch_gate_override` change): the gates are read from the sandbox's record now.
 */
export async function overrideLaunchGatesFor(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: Omit<OverrideInput, 'organizationName'>,
): Promise<{ organizationId: string; overridden: LaunchGateView[] }> {
  const organization = await findOrganization(tx, organizationId);
  if (!organization) throw new Error(`no organization ${organizationId}`);
  const source: LaunchGateSource = deps.launchGateSource
    ? await recordedInSandbox(deps.launchGateSource, organization.name)
    : { kind: 'unavailable', reason: 'sandbox_not_linked' };
  const seen = launchGateView(source, await listOverrides(tx, organization.id), deps.now());
  return overrideSeenGates(tx, deps, organization, seen, input);
}

/** An override's environment and reason, checked before anything is read: the reason, trimmed. */
function checkOverride(deps: Deps, input: Pick<OverrideInput, 'reason'>): string {
  if (!isLiveEnvironment(deps.environment)) {
    throw validationError(
      'environment',
      'overrides are recorded where keys are issued, in pilot or production; sandbox keys need no gates',
      'not_live',
    );
  }
  return requiredText(input.reason, 'reason', LAUNCH_GATE_OVERRIDE_REASON_CHARS_MAX, 'out_of_range');
}

async function overrideSeenGates(
  tx: Queryable,
  deps: Deps,
  organization: { id: string },
  seen: readonly LaunchGateView[],
  input: Omit<OverrideInput, 'organizationName'>,
): Promise<{ organizationId: string; overridden: LaunchGateView[] }> {
  const reason = checkOverride(deps, input);
  const now = deps.now();
  await lockOrganization(tx, organization.id);
  const already = new Set((await listOverrides(tx, organization.id)).map((o) => gateKey(o.product, o.gate)));
  const targets = seen.filter(
    (g) =>
      g.state === 'open' &&
      !already.has(gateKey(g.product, g.gate)) &&
      (input.gates === undefined || input.gates.includes(g.gate)) &&
      (input.products === undefined || input.products.includes(g.product)),
  );
  if (targets.length === 0) return { organizationId: organization.id, overridden: [] };
  const [record] = await appendEvidence(tx, deps, [
    {
      organizationId: organization.id,
      kind: 'launch_gate.override',
      actor: SYSTEM_ACTOR,
      data: {
        decided_by: 'operator',
        environment: deps.environment,
        reason,
        gates: targets.map((g) => ({ product: g.product, gate: g.gate, evidence: g.evidence })),
      },
    },
  ]);
  if (!record) throw new Error('the override was not recorded');
  await insertOverrides(
    tx,
    organization.id,
    targets.map((g) => ({
      product: g.product,
      gate: g.gate,
      reason,
      evidenceRecordId: record.id,
      createdAt: now,
    })),
  );
  const overridden: LaunchGateView[] = targets.map((g) => ({
    ...g,
    state: 'overridden',
    updatedAt: now,
    evidenceRecordId: record.id,
    override: { reason, at: now, evidenceRecordId: record.id },
  }));
  await recordEvents(
    tx,
    deps,
    overridden.map((g) => gateEvent(deps, organization.id, g, 'open', now)),
  );
  return { organizationId: organization.id, overridden };
}
