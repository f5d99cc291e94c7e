/**
 * Operator commands (the `mkoba` CLI). They run in-process against a store, or are handed to the running
 * server over its local control channel when that server owns the embedded database.
 *
 * Past 400 lines: one command table shared by the CLI and the control channel; each command is short.
 */
import { SCOPES, type Scope } from '../domain/apiKeys.ts';
import type { Member } from '../domain/members.ts';
import { LAUNCH_PRODUCTS, type LaunchProduct } from '../domain/organizationProfile.ts';
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
  requireLaunchGatesPassed,
} from '../modules/launchGates/index.ts';
import { type LedgerViolation, verifyLedger } from '../modules/ledger/index.ts';
import {
  type PromotionResult,
  promoteSandboxSubscriptions,
  setOrganizationWebhooks,
} from '../modules/webhooks/index.ts';
import { migrate } from '../store/migrate.ts';
import { findOrganizationByName } from '../store/repositories/organizations.ts';
import { issueOperatorKey, listOrganizationKeys, revokeKey } from './apiKeys.ts';
import { issueSignInLink } from './console/session.ts';
import type { Deps } from './deps.ts';
import { type EvidenceChainReport, SYSTEM_ACTOR, verifyEvidence } from './evidence.ts';
import { proposeIfGoverned } from './governedChanges.ts';
import { addMemberToOrganization, listMembersOfOrganization, removeMemberOfOrganization } from './members.ts';
import {
  importSanctionsList,
  listSanctionsListVersions,
  type SanctionsImportProgress,
  type SanctionsImportSummary,
} from './sanctions/importList.ts';
import { rewrapSecrets } from './secretsAtRest.ts';

export type AdminCommand =
  | {
      name: 'keys.create';
      organization: string;
      scopes?: Scope[] | undefined;
      member?: string | undefined;
      /** Who ran the command on the server (the CLI's OS user): the key and its evidence record them. */
      operator: string;
    }
  | { name: 'members.add'; organization: string; email: string; roles: string[] }
  | { name: 'members.list'; organization: string }
  | { name: 'members.remove'; organization: string; email: string }
  | { name: 'console.link'; organization: string; member: string }
  | {
      name: 'exports.run';
      organization: string;
      type: ExportType;
      format: ExportFormat;
      from?: string | undefined;
      to?: string | undefined;
    }
  | { name: 'keys.list'; organization: string }
  | { name: 'keys.revoke'; keyId: string }
  | { name: 'migrate' }
  | { name: 'ledger.verify' }
  | { name: 'evidence.verify' }
  | { name: 'orgs.set-webhooks'; organizationId: string; enabled: boolean }
  | {
      name: 'subscriptions.promote';
      organization: string;
      /** Who ran the command on the server (the CLI's OS user): the evidence records them. */
      operator: string;
      subscriptions?: string[] | undefined;
    }
  | { name: 'encryption.rewrap' }
  /** `path` is read by the process that runs the command: absolute, since a server's directory may differ. */
  | { name: 'sanctions.import'; path: string }
  | { name: 'sanctions.list' }
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

export interface SanctionsListVersionView {
  id: string;
  status: string;
  sourceFileName: string;
  entries: number;
  createdAt: string;
  activatedAt: string | null;
  retiredAt: string | null;
}

export interface MemberView {
  id: string;
  email: string;
  roles: string[];
  status: string;
}

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

/** The most members `members list` prints. */
export const MEMBERS_LIST_ROWS_MAX = 1_000;

export type AdminResult =
  | { name: 'keys.create'; key: string; keyId: string; organizationId: string; organizationCreated: boolean }
  | {
      name: 'keys.list';
      keys: {
        id: string;
        prefix: string;
        environment: string;
        scopes: string[];
        memberId: string | null;
        createdBy: string;
        createdAt: string;
        revokedAt: string | null;
      }[];
    }
  | { name: 'keys.revoke'; found: boolean; revokedAt: string | null }
  | { name: 'members.add' | 'members.remove'; member: MemberView | null }
  | { name: 'members.list'; members: MemberView[] }
  /** `baseUrl`: where the process that made the link is reached (a running server knows its own address). */
  | { name: 'console.link'; token: string; email: string; expiresAt: string; baseUrl: string | null }
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
  | { name: 'migrate'; applied: string[] }
  | { name: 'ledger.verify'; violations: LedgerViolation[] }
  | { name: 'evidence.verify'; chains: EvidenceChainReport[] }
  | { name: 'orgs.set-webhooks'; found: boolean; organizationName: string | null; enabled: boolean }
  | ({ name: 'subscriptions.promote' } & PromotionResult)
  | {
      name: 'encryption.rewrap';
      keyId: string;
      secrets: number;
      responses: number;
      railPartnerCredentials: number;
    }
  | { name: 'sanctions.import'; summary: SanctionsImportSummary }
  | { name: 'sanctions.list'; versions: SanctionsListVersionView[] }
  | { name: 'launch-gates.list'; organizationId: string | null; gates: LaunchGateLine[] }
  | {
      name: 'launch-gates.override';
      organizationId: string;
      overridden: LaunchGateLine[];
      /** The change waiting for approval, when the organization's policy governs overrides. */
      pending?: { change: string; approval: string | null } | undefined;
    };

export function isAdminCommand(value: unknown): value is AdminCommand {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  switch (c.name) {
    case 'keys.create':
      return (
        typeof c.organization === 'string' &&
        (c.scopes === undefined ||
          (Array.isArray(c.scopes) && c.scopes.every((s) => (SCOPES as readonly unknown[]).includes(s)))) &&
        (c.member === undefined || typeof c.member === 'string') &&
        typeof c.operator === 'string'
      );
    case 'members.add':
      return (
        typeof c.organization === 'string' &&
        typeof c.email === 'string' &&
        Array.isArray(c.roles) &&
        c.roles.every((r) => typeof r === 'string')
      );
    case 'members.list':
      return typeof c.organization === 'string';
    case 'members.remove':
      return typeof c.organization === 'string' && typeof c.email === 'string';
    case 'console.link':
      return typeof c.organization === 'string' && typeof c.member === 'string';
    case 'exports.run':
      return (
        typeof c.organization === 'string' &&
        (EXPORT_TYPES as readonly unknown[]).includes(c.type) &&
        (EXPORT_FORMATS as readonly unknown[]).includes(c.format) &&
        (c.from === undefined || typeof c.from === 'string') &&
        (c.to === undefined || typeof c.to === 'string')
      );
    case 'keys.list':
      return typeof c.organization === 'string';
    case 'keys.revoke':
      return typeof c.keyId === 'string';
    case 'orgs.set-webhooks':
      return typeof c.organizationId === 'string' && typeof c.enabled === 'boolean';
    case 'subscriptions.promote':
      return (
        typeof c.organization === 'string' &&
        typeof c.operator === 'string' &&
        (c.subscriptions === undefined ||
          (Array.isArray(c.subscriptions) && c.subscriptions.every((s) => typeof s === 'string')))
      );
    case 'sanctions.import':
      return typeof c.path === 'string';
    case 'launch-gates.list':
      return typeof c.organization === 'string';
    case 'launch-gates.override':
      return (
        typeof c.organization === 'string' &&
        typeof c.reason === 'string' &&
        (c.gates === undefined ||
          (Array.isArray(c.gates) &&
            c.gates.every((g) => (LAUNCH_GATES as readonly unknown[]).includes(g)))) &&
        (c.products === undefined ||
          (Array.isArray(c.products) &&
            c.products.every((p) => (LAUNCH_PRODUCTS as readonly unknown[]).includes(p))))
      );
    case 'migrate':
    case 'ledger.verify':
    case 'evidence.verify':
    case 'encryption.rewrap':
    case 'sanctions.list':
      return true;
    default:
      return false;
  }
}

function memberView(member: Member): MemberView {
  return { id: member.id, email: member.email, roles: member.roles, status: member.status };
}

export async function runAdminCommand(
  deps: Deps,
  command: AdminCommand,
  onProgress: (progress: AdminProgress) => void = () => {},
): Promise<AdminResult> {
  switch (command.name) {
    case 'keys.create': {
      // Pilot and production keys wait for the organization's launch gates (docs/GOING-LIVE.md).
      await requireLaunchGatesPassed(deps, command.organization);
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
    case 'keys.list': {
      const keys = await listOrganizationKeys(deps, command.organization);
      return {
        name: 'keys.list',
        keys: keys.map((k) => ({
          id: k.id,
          prefix: k.displayPrefix,
          environment: k.environment,
          scopes: k.scopes,
          memberId: k.memberId,
          createdBy: k.createdBy,
          createdAt: k.createdAt.toISOString(),
          revokedAt: k.revokedAt?.toISOString() ?? null,
        })),
      };
    }
    case 'keys.revoke': {
      const revoked = await revokeKey(deps, command.keyId);
      return {
        name: 'keys.revoke',
        found: revoked !== undefined,
        revokedAt: revoked?.revokedAt?.toISOString() ?? null,
      };
    }
    case 'members.add': {
      const member = await addMemberToOrganization(deps, command.organization, {
        email: command.email,
        roles: command.roles,
      });
      return { name: 'members.add', member: memberView(member) };
    }
    case 'members.list': {
      const members = await listMembersOfOrganization(deps, command.organization, MEMBERS_LIST_ROWS_MAX);
      return { name: 'members.list', members: members.map(memberView) };
    }
    case 'members.remove': {
      const member = await removeMemberOfOrganization(deps, command.organization, command.email);
      return { name: 'members.remove', member: member ? memberView(member) : null };
    }
    case 'console.link': {
      const link = await issueSignInLink(deps, command.organization, command.member);
      return {
        name: 'console.link',
        token: link.token,
        email: link.email,
        expiresAt: link.expiresAt.toISOString(),
        baseUrl: deps.publicUrl ?? null,
      };
    }
    case 'exports.run': {
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
    case 'ledger.verify':
      return { name: 'ledger.verify', violations: await verifyLedger(deps.store) };
    case 'evidence.verify':
      return { name: 'evidence.verify', chains: await verifyEvidence(deps.store) };
    case 'migrate':
      return { name: 'migrate', applied: (await migrate(deps.store)).applied };
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
    case 'encryption.rewrap': {
      const counts = await rewrapSecrets(deps);
      return { name: 'encryption.rewrap', keyId: deps.keyring.current?.id ?? '', ...counts };
    }
    case 'sanctions.import':
      return {
        name: 'sanctions.import',
        summary: await importSanctionsList(deps, command.path, { onProgress }),
      };
    case 'launch-gates.list': {
      const listing = await launchGatesOf(deps, { name: command.organization });
      return {
        name: 'launch-gates.list',
        organizationId: listing.organizationId ?? null,
        gates: listing.gates.map(launchGateLine),
      };
    }
    case 'launch-gates.override': {
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
    case 'sanctions.list':
      return {
        name: 'sanctions.list',
        versions: (await listSanctionsListVersions(deps)).map((v) => ({
          id: v.id,
          status: v.status,
          sourceFileName: v.sourceFileName,
          entries: v.entryCount,
          createdAt: v.createdAt.toISOString(),
          activatedAt: v.activatedAt?.toISOString() ?? null,
          retiredAt: v.retiredAt?.toISOString() ?? null,
        })),
      };
  }
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
