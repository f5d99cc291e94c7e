/**
 * The operator commands, part one: API keys listed and revoked, members, console sign-in links, migrations,
 * the ledger's and the evidence chains' checks, secrets re-wrapped, and sanctions lists. admin.ts adds the
 * rest and is what the CLI and the control channel call; both are edges that put modules together.
 */

import { listOrganizationKeys, revokeKey } from '../modules/apiKeys/index.ts';
import type { Member } from '../modules/authorization/index.ts';
import {
  addMemberToOrganization,
  listMembersOfOrganization,
  removeMemberOfOrganization,
} from '../modules/authorization/index.ts';
import {
  importSanctionsList,
  listSanctionsListVersions,
  type SanctionsImportProgress,
  type SanctionsImportSummary,
} from '../modules/compliance/index.ts';
import { type LedgerViolation, verifyLedger } from '../modules/ledger/index.ts';
import { migrate } from '../store/migrate.ts';
import { issueSignInLink } from './console/session.ts';
import type { Deps } from './deps.ts';
import { type EvidenceChainReport, verifyEvidence } from './evidence.ts';
import { rewrapSecrets } from './secretsAtRest.ts';

export type CoreAdminCommand =
  | { name: 'members.add'; organization: string; email: string; roles: string[] }
  | { name: 'members.list'; organization: string }
  | { name: 'members.remove'; organization: string; email: string }
  | { name: 'console.link'; organization: string; member: string }
  | { name: 'keys.list'; organization: string }
  | { name: 'keys.revoke'; keyId: string }
  | { name: 'migrate' }
  | { name: 'ledger.verify' }
  | { name: 'evidence.verify' }
  | { name: 'encryption.rewrap' }
  /** `path` is read by the process that runs the command: absolute, since a server's directory may differ. */
  | { name: 'sanctions.import'; path: string }
  | { name: 'sanctions.list' };

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

/** The most members `members list` prints. */
export const MEMBERS_LIST_ROWS_MAX = 1_000;

export type CoreAdminResult =
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
  | { name: 'migrate'; applied: string[] }
  | { name: 'ledger.verify'; violations: LedgerViolation[] }
  | { name: 'evidence.verify'; chains: EvidenceChainReport[] }
  | {
      name: 'encryption.rewrap';
      keyId: string;
      secrets: number;
      responses: number;
      railPartnerCredentials: number;
    }
  | { name: 'sanctions.import'; summary: SanctionsImportSummary }
  | { name: 'sanctions.list'; versions: SanctionsListVersionView[] };

/** A command's fields as received (over the control channel: unchecked JSON). */
export type CommandFields = Record<string, unknown>;

export function isStringList(value: unknown): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** Whether a received command of each name has the fields its runner reads. */
export const CORE_ADMIN_COMMAND_SHAPES: Record<CoreAdminCommand['name'], (c: CommandFields) => boolean> = {
  'members.add': (c) =>
    typeof c.organization === 'string' && typeof c.email === 'string' && isStringList(c.roles),
  'members.list': (c) => typeof c.organization === 'string',
  'members.remove': (c) => typeof c.organization === 'string' && typeof c.email === 'string',
  'console.link': (c) => typeof c.organization === 'string' && typeof c.member === 'string',
  'keys.list': (c) => typeof c.organization === 'string',
  'keys.revoke': (c) => typeof c.keyId === 'string',
  'sanctions.import': (c) => typeof c.path === 'string',
  migrate: () => true,
  'ledger.verify': () => true,
  'evidence.verify': () => true,
  'encryption.rewrap': () => true,
  'sanctions.list': () => true,
};

export async function runCoreAdminCommand(
  deps: Deps,
  command: CoreAdminCommand,
  onProgress: (progress: SanctionsImportProgress) => void,
): Promise<CoreAdminResult> {
  switch (command.name) {
    case 'keys.list':
      return listKeys(deps, command.organization);
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
    case 'console.link':
      return consoleLink(deps, command.organization, command.member);
    case 'ledger.verify':
      return { name: 'ledger.verify', violations: await verifyLedger(deps.store) };
    case 'evidence.verify':
      return { name: 'evidence.verify', chains: await verifyEvidence(deps.store) };
    case 'migrate':
      return { name: 'migrate', applied: (await migrate(deps.store)).applied };
    case 'encryption.rewrap': {
      const counts = await rewrapSecrets(deps);
      return { name: 'encryption.rewrap', keyId: deps.keyring.current?.id ?? '', ...counts };
    }
    case 'sanctions.import':
      return {
        name: 'sanctions.import',
        summary: await importSanctionsList(deps, command.path, { onProgress }),
      };
    case 'sanctions.list':
      return listSanctionsVersions(deps);
  }
}

function memberView(member: Member): MemberView {
  return { id: member.id, email: member.email, roles: member.roles, status: member.status };
}

async function listKeys(deps: Deps, organization: string): Promise<CoreAdminResult> {
  const keys = await listOrganizationKeys(deps, organization);
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

async function consoleLink(deps: Deps, organization: string, member: string): Promise<CoreAdminResult> {
  const link = await issueSignInLink(deps, organization, member);
  return {
    name: 'console.link',
    token: link.token,
    email: link.email,
    expiresAt: link.expiresAt.toISOString(),
    baseUrl: deps.publicUrl ?? null,
  };
}

async function listSanctionsVersions(deps: Deps): Promise<CoreAdminResult> {
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
