/**
 * The kinds of governed change and, for each, how a proposed change is checked and how it is made: the
 * same use case the route calls when no approval is needed, so an approved change is exactly the change
 * that would have been made at once. Every kind but `policy` (which keeps its own record, see policies.ts)
 * is listed; the type makes a new kind add its entry here. The composition root hands this registry to
 * governed changes as `deps.changeKinds`, so governed changes import none of the use cases below.
 */

import type { DigitalAsset, DigitalAssetNetwork } from '../domain/digitalAssets.ts';
import { validationError } from '../domain/errors.ts';
import type { EvidenceActor } from '../domain/evidence.ts';
import type { LaunchProduct } from '../domain/organizationProfile.ts';
import { open, seal } from '../domain/sealing.ts';
import { routeLimitMinor } from '../domain/stablecoins.ts';
import { applyPendingOwnKey, parsePendingKeyPayload } from '../modules/apiKeys/index.ts';
import { addMember, parseRoles, updateMember } from '../modules/authorization/index.ts';
import {
  configureSmileId,
  createRule,
  removeSmileId,
  setRouteStatus,
  updateRule,
} from '../modules/compliance/index.ts';
import { parseFeeRules, updateFeeSchedule } from '../modules/fees/index.ts';
import type { LaunchGate } from '../modules/launchGates/index.ts';
import { overrideLaunchGatesFor } from '../modules/launchGates/index.ts';
import {
  configureRailPartner,
  REVERSAL_REASON_MAX_CHARS,
  requestReversal,
  updateRailPartner,
} from '../modules/railPartners/index.ts';
import {
  applyRateChange,
  planRateChange,
  RATE_BAND_APPROVAL,
  RATE_BAND_RULE_ID,
} from '../modules/stablecoins/index.ts';
import { closeTrustAccountFor, createTrustAccount } from '../modules/treasury/index.ts';
import type { Queryable } from '../store/store.ts';
import type { ApplyInput, ChangeKind, Deps, RegisteredChangeKind } from './deps.ts';

// biome-ignore lint/suspicious/noExplicitAny: a stored request body; its use case checks every field.
type Body = Record<string, any>;

/** A payload's `credentials`, sealed while its change waits for approval, opened to apply it. */
const CREDENTIALS_SEALED_WHILE_WAITING: Pick<ChangeKind, 'seal' | 'open'> = {
  seal(deps, changeId, payload) {
    if (payload.credentials === undefined) return payload;
    return {
      ...payload,
      credentials: {
        sealed: seal(
          deps.keyring,
          JSON.stringify(payload.credentials),
          changeSecretsContext(changeId),
          deps.randomBytes,
        ),
      },
    };
  },
  open(deps, changeId, payload) {
    const sealed = (payload.credentials as Body | undefined)?.sealed;
    if (typeof sealed !== 'string') return payload;
    return {
      ...payload,
      credentials: JSON.parse(open(deps.keyring, sealed, changeSecretsContext(changeId))),
    };
  },
};

function unknownAction(kind: string, action: string): never {
  throw new Error(`no ${kind} change does '${action}'`);
}

function target(input: ApplyInput): string {
  if (input.targetId === null) throw new Error(`a ${input.action} change needs its target`);
  return input.targetId;
}

type ApplyChange = ChangeKind['apply'];

/** A kind's apply, a use case for each action it has; any other action is a bug of the proposing route. */
function applyByAction(kind: RegisteredChangeKind, actions: Record<string, ApplyChange>): ApplyChange {
  return async (tx, deps, input) => {
    const apply = Object.hasOwn(actions, input.action) ? actions[input.action] : undefined;
    if (!apply) return unknownAction(kind, input.action);
    return apply(tx, deps, input);
  };
}

/** The action of a use case that creates a record from the payload: the new record is the change's target. */
function creates(
  create: (
    tx: Queryable,
    deps: Deps,
    organizationId: string,
    payload: never,
    actor: EvidenceActor,
  ) => Promise<{ id: string }>,
): ApplyChange {
  return async (tx, deps, input) => {
    const record = await create(tx, deps, input.organizationId, input.payload as never, input.actor);
    return { targetId: record.id };
  };
}

/** The action of a use case that updates the change's target from the payload. */
function updatesTarget(
  update: (
    tx: Queryable,
    deps: Deps,
    organizationId: string,
    id: string,
    payload: never,
    actor: EvidenceActor,
  ) => Promise<unknown>,
): ApplyChange {
  return async (tx, deps, input) => {
    await update(tx, deps, input.organizationId, target(input), input.payload as never, input.actor);
    return { targetId: null };
  };
}

/** The sealing context of a stored change's secrets: its id, so a sealed value cannot move elsewhere. */
const changeSecretsContext = (changeId: string) => `governed_change:${changeId}:credentials`;

/** Scopes a key may hold without governance: an integrator's. */
const UNGOVERNED_KEY_SCOPES = new Set(['read', 'write']);

export const CHANGE_KINDS: Record<RegisteredChangeKind, ChangeKind> = {
  role_grant: {
    // Adding a member, or changing a member's roles; a name alone is not a grant.
    governs: (request) => request.action === 'add' || (request.payload as Body).roles !== undefined,
    check: (_deps, request) => {
      parseRoles((request.payload as Body).roles);
    },
    apply: applyByAction('role_grant', { add: creates(addMember), update: updatesTarget(updateMember) }),
  },
  api_key: {
    // A member's own key with more than `read`/`write` (createOwnApiKeyGoverned). The payload is the key's
    // id, hash, display prefix, scopes and description: never its secret, shown once to the proposer.
    governs: (request) => {
      const scopes = (request.payload as Body).scopes;
      return !Array.isArray(scopes) || scopes.some((s) => !UNGOVERNED_KEY_SCOPES.has(s));
    },
    check: (_deps, request) => {
      if (request.action !== 'create') return unknownAction('api_key', request.action);
      parsePendingKeyPayload(request.payload as Body);
    },
    // The hash is sealed while the change waits, and never shown.
    seal(deps, changeId, payload) {
      if (typeof payload.key_hash !== 'string') return payload;
      return {
        ...payload,
        key_hash: {
          sealed: seal(deps.keyring, payload.key_hash, changeSecretsContext(changeId), deps.randomBytes),
        },
      };
    },
    open(deps, changeId, payload) {
      const sealed = (payload.key_hash as Body | undefined)?.sealed;
      if (typeof sealed !== 'string') return payload;
      return { ...payload, key_hash: open(deps.keyring, sealed, changeSecretsContext(changeId)) };
    },
    async apply(tx, deps, input) {
      if (input.action !== 'create') return unknownAction('api_key', input.action);
      // Always the proposer's own key, in the change's organization: nothing in the payload names either.
      const record = await applyPendingOwnKey(tx, deps, {
        organizationId: input.organizationId,
        proposedBy: input.proposedBy,
        payload: input.payload,
        actor: input.actor,
      });
      return { targetId: record.id };
    },
  },
  conversion_rate: {
    // A rate more than the band away from the one in force, or a pair's first rate, moves value by fiat:
    // a second member approves it even where the policy names no rule for rates.
    async intrinsicApproval(tx, deps, organizationId, request) {
      const plan = await planRateChange(tx, deps, organizationId, request.payload as never);
      if (plan.requiringApproval.length === 0) return undefined;
      return { rule: RATE_BAND_RULE_ID, approval: RATE_BAND_APPROVAL };
    },
    async apply(tx, deps, input) {
      if (input.action !== 'set') return unknownAction('conversion_rate', input.action);
      const plan = await planRateChange(tx, deps, input.organizationId, input.payload as never);
      await applyRateChange(tx, deps, plan, input.actor, { approved: true });
      return { targetId: null };
    },
  },
  fee_schedule: {
    check: (_deps, request) => {
      parseFeeRules((request.payload as Body).rules);
    },
    async apply(tx, deps, input) {
      if (input.action !== 'set') return unknownAction('fee_schedule', input.action);
      await updateFeeSchedule(
        tx,
        deps,
        input.organizationId,
        input.payload as Body,
        input.proposedBy,
        input.actor,
      );
      return { targetId: null };
    },
  },
  aml_rule: {
    apply: applyByAction('aml_rule', { create: creates(createRule), update: updatesTarget(updateRule) }),
  },
  digital_asset_route: {
    // The payload is the route's address (`asset`, `network`) and the request's body.
    check: (_deps, request) => {
      const body = request.payload as Body;
      routeLimitMinor(body.limits?.single_max, body.asset, 'limits.single_max');
      routeLimitMinor(body.limits?.daily_max, body.asset, 'limits.daily_max');
    },
    async apply(tx, deps, input) {
      if (input.action !== 'set') return unknownAction('digital_asset_route', input.action);
      const body = input.payload as Body;
      const asset = body.asset as DigitalAsset;
      await setRouteStatus(
        tx,
        deps,
        input.organizationId,
        {
          asset,
          network: body.network as DigitalAssetNetwork,
          status: body.status,
          singleMaxMinor: routeLimitMinor(body.limits?.single_max, asset, 'limits.single_max'),
          dailyMaxMinor: routeLimitMinor(body.limits?.daily_max, asset, 'limits.daily_max'),
        },
        input.actor,
      );
      return { targetId: `${asset}:${body.network}` };
    },
  },
  rail_partner: {
    // Credentials are sealed while the change waits, and never shown.
    ...CREDENTIALS_SEALED_WHILE_WAITING,
    apply: applyByAction('rail_partner', {
      create: creates(configureRailPartner),
      update: updatesTarget(updateRailPartner),
    }),
  },
  verification_provider: {
    // The API key is sealed while the change waits, and never shown.
    ...CREDENTIALS_SEALED_WHILE_WAITING,
    apply: applyByAction('verification_provider', {
      async configure(tx, deps, input) {
        await configureSmileId(tx, deps, input.organizationId, input.payload as never, input.actor);
        return { targetId: input.organizationId };
      },
      async remove(tx, deps, input) {
        await removeSmileId(tx, deps, input.organizationId, input.actor);
        return { targetId: input.organizationId };
      },
    }),
  },
  trust_account: {
    apply: applyByAction('trust_account', {
      create: creates(createTrustAccount),
      async close(tx, deps, input) {
        await closeTrustAccountFor(tx, deps, input.organizationId, target(input), input.actor);
        return { targetId: null };
      },
    }),
  },
  launch_gate_override: {
    async apply(tx, deps, input) {
      if (input.action !== 'override') return unknownAction('launch_gate_override', input.action);
      const body = input.payload as Body;
      await overrideLaunchGatesFor(tx, deps, input.organizationId, {
        reason: String(body.reason),
        gates: body.gates as LaunchGate[] | undefined,
        products: body.products as LaunchProduct[] | undefined,
      });
      return { targetId: null };
    },
  },
  transfer_reversal: {
    // The payload is the operator's reason; the target is the settled payout. Applied, it records the
    // reversal for the worker to send, as the route does when no approval is needed.
    check: (_deps, request) => {
      if (request.action !== 'request') return unknownAction('transfer_reversal', request.action);
      const reason = (request.payload as Body).reason;
      if (typeof reason !== 'string' || reason.trim() === '' || reason.length > REVERSAL_REASON_MAX_CHARS) {
        throw validationError('reason', 'A reason is required.', 'required');
      }
    },
    async apply(tx, deps, input) {
      if (input.action !== 'request') return unknownAction('transfer_reversal', input.action);
      const transferId = target(input);
      await requestReversal(tx, deps, {
        organizationId: input.organizationId,
        transferId,
        reason: String((input.payload as Body).reason),
        actor: input.actor,
        actorId: input.proposedBy,
      });
      return { targetId: transferId };
    },
  },
};
