/**
 * Operator commands (the `mkoba` CLI). They run in-process against a store, or are handed to the running
 * server over its local control channel when that server owns the embedded database. Those on the shared
 * core's records are in adminCore.ts; here, those on modules' records (keys issued behind the launch gates,
 * exports, webhook admission and promotion, launch gates), and the one command table over both.
 */
import { SCOPES, type Scope } from '../domain/access.ts';
import { LAUNCH_PRODUCTS, type LaunchProduct } from '../domain/organizationProfile.ts';
import { issueOperatorKey } from '../modules/apiKeys/index.ts';
import { proposeIfGoverned } from '../modules/authorization/index.ts';
import type { SanctionsImportProgress } from '../modules/compliance/index.ts';
import {
  EXPORT_FORMATS,
  EXPORT_TYPES,
  type ExportFormat,
  type ExportProgress,
  type ExportType,
  exportFormatters,
  runExportNow,
} from '../modules/exports/index.ts';
import {
  LAUNCH_GATES,
  type LaunchGate,
  type LaunchGateView,
  launchGatesOf,
  overrideLaunchGates,
  type ProviderGateDecision,
  RAIL_PROVIDERS_GATE,
  railProviderGatesBeside,
  requireLaunchGatesPassed,
} from '../modules/launchGates/index.ts';
import {
  type PromotionResult,
  promoteSandboxSubscriptions,
  setOrganizationWebhooks,
} from '../modules/webhooks/index.ts';
import { findOrganizationByName } from '../store/repositories/organizations.ts';
import {
  CORE_ADMIN_COMMAND_SHAPES,
  type CommandFields,
  type CoreAdminCommand,
  type CoreAdminResult,
  isStringList,
  runCoreAdminCommand,
} from './adminCore.ts';
import type { Deps } from './deps.ts';
import { SYSTEM_ACTOR } from './evidence.ts';

export type AdminCommand =
  | CoreAdminCommand
  | {
      name: 'keys.create';
      organization: string;
      scopes?: Scope[] | undefined;
      member?: string | undefined;
      /** Who ran the command on the server (the CLI's OS user): the key and its evidence record them. */
      operator: string;
    }
  | {
      name: 'exports.run';
      organization: string;
      type: ExportType;
      format: ExportFormat;
      from?: string | undefined;
      to?: string | undefined;
    }
  | { name: 'orgs.set-webhooks'; organizationId: string; enabled: boolean }
  | {
      name: 'subscriptions.promote';
      organization: string;
      /** Who ran the command on the server (the CLI's OS user): the evidence records them. */
      operator: string;
      subscriptions?: string[] | undefined;
    }
  | { name: 'launch-gates.list'; organization: string }
  | {
      name: 'launch-gates.override';
      organization: string;
      reason: string;
      gates?: LaunchGate[] | undefined;
      products?: LaunchProduct[] | undefined;
    };

/** What a long command reports while it runs (the control channel forwards it). */
export type AdminProgress = SanctionsImportProgress | ExportProgress;

/** A launch gate as the CLI prints it. */
export interface LaunchGateLine {
  product: string;
  gate: string;
  state: string;
  updatedAt: string;
  evidence: unknown;
  evidenceRecord: string | null;
  overrideReason: string | null;
}

function launchGateLine(g: LaunchGateView): LaunchGateLine {
  return {
    product: g.product,
    gate: g.gate,
    state: g.state,
    updatedAt: g.updatedAt.toISOString(),
    evidence: g.evidence,
    evidenceRecord: g.evidenceRecordId,
    overrideReason: g.override?.reason ?? null,
  };
}

/** A rail-provider gate as listed: decided now, from this deployment's partners, never recorded. */
function providerGateLine(p: ProviderGateDecision, now: string): LaunchGateLine {
  return {
    product: p.product,
    gate: RAIL_PROVIDERS_GATE,
    state: p.state,
    updatedAt: now,
    evidence: {
      configured: p.configured,
      ...(p.missing.length > 0 ? { missing: p.missing } : {}),
      ...(p.uncoveredNetworks.length > 0 ? { uncovered_networks: p.uncoveredNetworks } : {}),
      ...(p.sandboxOnly.length > 0 ? { sandbox_only: [...p.sandboxOnly] } : {}),
    },
    evidenceRecord: null,
    overrideReason: null,
  };
}

export type AdminResult =
  | CoreAdminResult
  | { name: 'keys.create'; key: string; keyId: string; organizationId: string; organizationCreated: boolean }
  | {
      name: 'exports.run';
      export: {
        id: string;
        status: string;
        rows: number;
        bytes: number | null;
        sha256: string | null;
        file: string;
      };
    }
  | { name: 'orgs.set-webhooks'; found: boolean; organizationName: string | null; enabled: boolean }
  | ({ name: 'subscriptions.promote' } & PromotionResult)
  | { name: 'launch-gates.list'; organizationId: string | null; gates: LaunchGateLine[] }
  | {
      name: 'launch-gates.override';
      organizationId: string;
      overridden: LaunchGateLine[];
      /** The change waiting for approval, when the organization's policy governs overrides. */
      pending?: { change: string; approval: string | null } | undefined;
    };

/** Absent, or a list of items each of which passes `isItem`. */
function isOptionalListOf(value: unknown, isItem: (item: unknown) => boolean): boolean {
  return value === undefined || (Array.isArray(value) && value.every(isItem));
}

const ADMIN_COMMAND_SHAPES: Record<AdminCommand['name'], (c: CommandFields) => boolean> = {
  ...CORE_ADMIN_COMMAND_SHAPES,
  'keys.create': (c) =>
    typeof c.organization === 'string' &&
    isOptionalListOf(c.scopes, (s) => (SCOPES as readonly unknown[]).includes(s)) &&
    (c.member === undefined || typeof c.member === 'string') &&
    typeof c.operator === 'string',
  'exports.run': (c) =>
    typeof c.organization === 'string' &&
    (EXPORT_TYPES as readonly unknown[]).includes(c.type) &&
    (EXPORT_FORMATS as readonly unknown[]).includes(c.format) &&
    (c.from === undefined || typeof c.from === 'string') &&
    (c.to === undefined || typeof c.to === 'string'),
  'orgs.set-webhooks': (c) => typeof c.organizationId === 'string' && typeof c.enabled === 'boolean',
  'subscriptions.promote': (c) =>
    typeof c.organization === 'string' &&
    typeof c.operator === 'string' &&
    (c.subscriptions === undefined || isStringList(c.subscriptions)),
  'launch-gates.list': (c) => typeof c.organization === 'string',
  'launch-gates.override': (c) =>
    typeof c.organization === 'string' &&
    typeof c.reason === 'string' &&
    isOptionalListOf(c.gates, (g) => (LAUNCH_GATES as readonly unknown[]).includes(g)) &&
    isOptionalListOf(c.products, (p) => (LAUNCH_PRODUCTS as readonly unknown[]).includes(p)),
};

export function isAdminCommand(value: unknown): value is AdminCommand {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as CommandFields;
  if (typeof c.name !== 'string' || !Object.hasOwn(ADMIN_COMMAND_SHAPES, c.name)) return false;
  return ADMIN_COMMAND_SHAPES[c.name as AdminCommand['name']](c);
}

export async function runAdminCommand(
  deps: Deps,
  command: AdminCommand,
  onProgress: (progress: AdminProgress) => void = () => {},
): Promise<AdminResult> {
  switch (command.name) {
    case 'keys.create':
      return createKey(deps, command);
    case 'exports.run':
      return runExport(deps, command, onProgress);
    case 'orgs.set-webhooks': {
      const updated = await setOrganizationWebhooks(deps, command.organizationId, command.enabled);
      return {
        name: 'orgs.set-webhooks',
        found: updated !== undefined,
        organizationName: updated?.name ?? null,
        enabled: updated?.enabled ?? command.enabled,
      };
    }
    case 'subscriptions.promote':
      return {
        name: 'subscriptions.promote',
        ...(await promoteSandboxSubscriptions(deps, {
          organizationName: command.organization,
          operator: command.operator,
          subscriptionIds: command.subscriptions,
        })),
      };
    case 'launch-gates.list': {
      const listing = await launchGatesOf(deps, { name: command.organization });
      const providers = await railProviderGatesBeside(deps, command.organization, listing.gates);
      const now = deps.now().toISOString();
      return {
        name: 'launch-gates.list',
        organizationId: listing.organizationId ?? null,
        gates: [...listing.gates.map(launchGateLine), ...providers.map((p) => providerGateLine(p, now))],
      };
    }
    case 'launch-gates.override':
      return overrideGates(deps, command);
    default:
      return runCoreAdminCommand(deps, command, onProgress);
  }
}

async function createKey(
  deps: Deps,
  command: Extract<AdminCommand, { name: 'keys.create' }>,
): Promise<AdminResult> {
  // Pilot and production keys wait for the organization's launch gates (docs/GOING-LIVE.md).
  await requireLaunchGatesPassed(deps, command.organization, command.scopes);
  const issued = await issueOperatorKey(deps, {
    organizationName: command.organization,
    scopes: command.scopes,
    memberEmail: command.member,
    operator: command.operator,
  });
  return {
    name: 'keys.create',
    key: issued.key,
    keyId: issued.record.id,
    organizationId: issued.record.organizationId,
    organizationCreated: issued.organizationCreated,
  };
}

async function runExport(
  deps: Deps,
  command: Extract<AdminCommand, { name: 'exports.run' }>,
  onProgress: (progress: AdminProgress) => void,
): Promise<AdminResult> {
  const organization = await findOrganizationByName(deps.store, command.organization);
  if (!organization) throw new Error(`no organization named '${command.organization}'`);
  const { job, file } = await runExportNow(
    deps,
    organization.id,
    { type: command.type, format: command.format, from: command.from, to: command.to },
    exportFormatters(deps.environment),
    (progress) => onProgress(progress),
  );
  return {
    name: 'exports.run',
    export: {
      id: job.id,
      status: job.status,
      rows: job.rowsWritten,
      bytes: job.bytes,
      sha256: job.sha256,
      file,
    },
  };
}

async function overrideGates(
  deps: Deps,
  command: Extract<AdminCommand, { name: 'launch-gates.override' }>,
): Promise<AdminResult> {
  const pending = await proposeOverride(deps, command);
  if (pending) {
    return {
      name: 'launch-gates.override',
      organizationId: pending.organizationId,
      overridden: [],
      pending: { change: pending.id, approval: pending.approvalId },
    };
  }
  const result = await overrideLaunchGates(deps, {
    organizationName: command.organization,
    reason: command.reason,
    gates: command.gates,
    products: command.products,
  });
  return {
    name: 'launch-gates.override',
    organizationId: result.organizationId,
    overridden: result.overridden.map(launchGateLine),
  };
}

/**
 * An override the organization's policy governs (a `change` rule naming `launch_gate_override`) waits for
 * its members' approval instead of being recorded now; undefined when it may be recorded at once.
 */
async function proposeOverride(
  deps: Deps,
  command: Extract<AdminCommand, { name: 'launch-gates.override' }>,
) {
  const organization = await findOrganizationByName(deps.store, command.organization);
  if (!organization) return undefined;
  const change = await deps.store.transaction((tx) =>
    proposeIfGoverned(
      tx,
      deps,
      organization.id,
      {
        kind: 'launch_gate_override',
        action: 'override',
        targetId: null,
        payload: { reason: command.reason, gates: command.gates, products: command.products },
      },
      SYSTEM_ACTOR,
    ),
  );
  return change ?? undefined;
}
