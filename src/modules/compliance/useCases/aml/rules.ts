/**
 * AML rules as data: each organization starts with the defaults (written, with their evidence, the first
 * time its rules are needed), then its operators list, add and change them. The ledger writer reads them
 * through a short per-process cache.
 */

import type { Deps } from '../../../../app/deps.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../../app/evidence.ts';
import { organizationCache } from '../../../../app/organizationCache.ts';
import { getById, lockById } from '../../../../app/reads.ts';
import {
  AML_RULE_NAME_LENGTH_MAX,
  type AmlAction,
  type AmlRule,
  type AmlRuleType,
} from '../../../../domain/decisions/aml.ts';
import { defaultAmlRules } from '../../../../domain/decisions/amlDefaultRules.ts';
import { parseAmlParameters } from '../../../../domain/decisions/amlRuleParameters.ts';
import { AppError, validationError } from '../../../../domain/errors.ts';
import type { EvidenceActor } from '../../../../domain/evidence.ts';
import type { Queryable } from '../../../../store/store.ts';
import { amlRuleFields } from '../../domain.ts';
import {
  claimAmlRuleSet,
  findAmlRule,
  hasAmlRuleSet,
  insertAmlRule,
  listAmlRules,
  updateAmlRule,
} from '../../repository/aml.ts';

/** The aml rule with this id, its row locked for the transaction; 404 when there is none. */
const lockAmlRule = lockById(findAmlRule, 'aml_rule');

/**
 * How long a process keeps an organization's rules before reading them again: a change made through
 * another process applies within this bound (at once in the process that made it).
 */
export const AML_RULES_CACHE_TTL_MS = 5_000;
/** Organizations whose rules one process keeps at most. */
export const AML_RULES_CACHE_ENTRIES_MAX = 10_000;
/** Rules one organization may have. */
export const AML_RULES_PER_ORGANIZATION_MAX = 200;

const rulesCache = organizationCache<AmlRule[]>(AML_RULES_CACHE_TTL_MS, AML_RULES_CACHE_ENTRIES_MAX);

/** Writes the defaults in the caller's transaction if the organization has no rule set yet. */
async function ensureDefaults(tx: Queryable, deps: Deps, organizationId: string): Promise<void> {
  if (await hasAmlRuleSet(tx, organizationId)) return;
  const now = deps.now();
  if (!(await claimAmlRuleSet(tx, organizationId, now))) return;
  const rules: AmlRule[] = defaultAmlRules().map((d) => ({
    ...d,
    id: deps.newId('amlRule'),
    organizationId,
    version: 1,
    createdAt: now,
    updatedAt: now,
  }));
  for (const rule of rules) await insertAmlRule(tx, rule);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'aml.rules.update',
      actor: SYSTEM_ACTOR,
      data: { change: 'defaults', rules: rules.map(amlRuleFields) },
    },
  ]);
}

/** The organization's rules as they stand, the defaults written first if need be. */
export async function listRules(deps: Deps, organizationId: string): Promise<AmlRule[]> {
  if (!(await hasAmlRuleSet(deps.store, organizationId))) {
    await deps.store.transaction((tx) => ensureDefaults(tx, deps, organizationId));
  }
  return listAmlRules(deps.store, organizationId);
}

/** The hot path's read: cached per process for AML_RULES_CACHE_TTL_MS. */
export async function loadAmlRules(deps: Deps, organizationId: string): Promise<AmlRule[]> {
  return rulesCache.read(deps.store, organizationId, deps.now().getTime(), () =>
    listRules(deps, organizationId),
  );
}

export const getRule = getById<AmlRule>(findAmlRule, 'aml_rule');

export interface AmlRuleInput {
  name?: string | undefined;
  type?: AmlRuleType | undefined;
  parameters?: Record<string, unknown> | undefined;
  action?: AmlAction | undefined;
  enabled?: boolean | undefined;
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > AML_RULE_NAME_LENGTH_MAX) {
    throw validationError(
      'name',
      `name must be 1 to ${AML_RULE_NAME_LENGTH_MAX} characters`,
      'invalid_value',
    );
  }
  return trimmed;
}

export async function createRule(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: Required<Pick<AmlRuleInput, 'name' | 'type' | 'parameters' | 'action'>> & { enabled?: boolean },
  actor: EvidenceActor,
): Promise<AmlRule> {
  const parameters = parseAmlParameters(input.type, input.parameters);
  const name = checkedName(input.name);
  await ensureDefaults(tx, deps, organizationId);
  if ((await listAmlRules(tx, organizationId)).length >= AML_RULES_PER_ORGANIZATION_MAX) {
    throw new AppError({
      status: 422,
      code: 'limit_exceeded',
      title: 'Too many rules',
      detail: `An organization has at most ${AML_RULES_PER_ORGANIZATION_MAX} AML rules; disable or change one instead.`,
    });
  }
  const now = deps.now();
  const rule: AmlRule = {
    id: deps.newId('amlRule'),
    organizationId,
    name,
    parameters,
    action: input.action,
    enabled: input.enabled ?? true,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
  await insertAmlRule(tx, rule);
  await recordRuleChange(tx, deps, actor, 'create', undefined, rule);
  return rule;
}

/** Changes a rule's name, parameters (of its own type), action or enabled; each change is a new version. */
export async function updateRule(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  input: Omit<AmlRuleInput, 'type'>,
  actor: EvidenceActor,
): Promise<AmlRule> {
  const before = await lockAmlRule(tx, organizationId, id);
  const after: AmlRule = {
    ...before,
    name: input.name === undefined ? before.name : checkedName(input.name),
    parameters:
      input.parameters === undefined
        ? before.parameters
        : parseAmlParameters(before.parameters.type, input.parameters),
    action: input.action ?? before.action,
    enabled: input.enabled ?? before.enabled,
    version: before.version + 1,
    updatedAt: deps.now(),
  };
  await updateAmlRule(tx, after);
  await recordRuleChange(tx, deps, actor, 'update', before, after);
  return after;
}

/**
 * An operator's rule change, written: its evidence (the rule before, none for a new one, and after) and the
 * process's cached rules of the organization dropped, so the change applies here at once.
 */
async function recordRuleChange(
  tx: Queryable,
  deps: Deps,
  actor: EvidenceActor,
  change: 'create' | 'update',
  before: AmlRule | undefined,
  after: AmlRule,
): Promise<void> {
  await appendEvidence(tx, deps, [
    {
      organizationId: after.organizationId,
      kind: 'aml.rules.update',
      actor,
      data: {
        change,
        before: before === undefined ? null : amlRuleFields(before),
        after: amlRuleFields(after),
      },
    },
  ]);
  rulesCache.forget(deps.store, after.organizationId);
}
