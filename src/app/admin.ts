/**
 * Operator commands (the `mkoba` CLI). They run in-process against a store, or are handed to the running
 * server over its local control channel when that server owns the embedded database.
 */
import { SCOPES, type Scope } from '../domain/apiKeys.ts';
import { migrate } from '../store/migrate.ts';
import { issueApiKey, listOrganizationKeys, revokeKey } from './apiKeys.ts';
import type { Deps } from './deps.ts';
import { rewrapSecrets } from './encryption.ts';
import { type LedgerViolation, verifyLedger } from './ledgerVerify.ts';
import { setOrganizationWebhooks } from './webhooks.ts';

export type AdminCommand =
  | { name: 'keys.create'; organization: string; scopes: Scope[] }
  | { name: 'keys.list'; organization: string }
  | { name: 'keys.revoke'; keyId: string }
  | { name: 'migrate' }
  | { name: 'ledger.verify' }
  | { name: 'orgs.set-webhooks'; organizationId: string; enabled: boolean }
  | { name: 'encryption.rewrap' };

export type AdminResult =
  | { name: 'keys.create'; key: string; keyId: string; organizationId: string; organizationCreated: boolean }
  | {
      name: 'keys.list';
      keys: {
        id: string;
        prefix: string;
        environment: string;
        scopes: string[];
        createdAt: string;
        revokedAt: string | null;
      }[];
    }
  | { name: 'keys.revoke'; found: boolean; revokedAt: string | null }
  | { name: 'migrate'; applied: string[] }
  | { name: 'ledger.verify'; violations: LedgerViolation[] }
  | { name: 'orgs.set-webhooks'; found: boolean; organizationName: string | null; enabled: boolean }
  | { name: 'encryption.rewrap'; keyId: string; secrets: number; responses: number };

export function isAdminCommand(value: unknown): value is AdminCommand {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  switch (c.name) {
    case 'keys.create':
      return (
        typeof c.organization === 'string' &&
        Array.isArray(c.scopes) &&
        c.scopes.every((s) => (SCOPES as readonly unknown[]).includes(s))
      );
    case 'keys.list':
      return typeof c.organization === 'string';
    case 'keys.revoke':
      return typeof c.keyId === 'string';
    case 'orgs.set-webhooks':
      return typeof c.organizationId === 'string' && typeof c.enabled === 'boolean';
    case 'migrate':
    case 'ledger.verify':
    case 'encryption.rewrap':
      return true;
    default:
      return false;
  }
}

export async function runAdminCommand(deps: Deps, command: AdminCommand): Promise<AdminResult> {
  switch (command.name) {
    case 'keys.create': {
      const issued = await issueApiKey(deps, {
        organizationName: command.organization,
        scopes: command.scopes,
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
    case 'ledger.verify':
      return { name: 'ledger.verify', violations: await verifyLedger(deps.store) };
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
    case 'encryption.rewrap': {
      const counts = await rewrapSecrets(deps);
      return { name: 'encryption.rewrap', keyId: deps.keyring.current?.id ?? '', ...counts };
    }
  }
}
