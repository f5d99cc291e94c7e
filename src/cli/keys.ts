/**
 * `mkoba keys create --organization NAME [--scopes …] [--member EMAIL]`, `mkoba keys list` and
 * `mkoba keys revoke KEY_ID`: an organization's API keys, each recorded with the OS user who ran the command.
 */
import type { Config } from '../config.ts';
import { DEFAULT_SCOPES, SCOPES, type Scope } from '../domain/access.ts';
import { operatorName, organizationOrSandbox, runAdmin } from './runAdmin.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };

export interface KeysOptions {
  organization?: string | undefined;
  scopes?: string | undefined;
  member?: string | undefined;
}

export async function keysCommand(
  sub: string | undefined,
  rest: readonly string[],
  options: KeysOptions,
  config: Config,
  io: Io,
): Promise<number> {
  if (sub === 'create') return createKey(options, config, io);
  if (sub === 'list') return listKeys(options, config, io);
  if (sub === 'revoke') return revokeKey(rest, config, io);
  throw new UsageError(`unknown keys command '${sub ?? ''}': use create, list or revoke`);
}

async function createKey(options: KeysOptions, config: Config, io: Io): Promise<number> {
  if (!options.organization) throw new UsageError('keys create needs --organization NAME');
  const result = await runAdmin(config, io, {
    name: 'keys.create',
    organization: options.organization,
    // A member's key takes the member's scopes unless narrower ones are named.
    scopes:
      options.member !== undefined && options.scopes === undefined ? undefined : parseScopes(options.scopes),
    member: options.member,
    // Who ran it, recorded with the key and in the organization's evidence.
    operator: operatorName(),
  });
  if (result.name === 'keys.create') {
    io.err(
      `created key ${result.keyId} for organization ${result.organizationId}${result.organizationCreated ? ' (new)' : ''}`,
    );
    io.out(result.key);
  }
  return 0;
}

async function listKeys(options: KeysOptions, config: Config, io: Io): Promise<number> {
  const organization = organizationOrSandbox(options.organization, config);
  if (!organization) throw new UsageError('keys list needs --organization NAME');
  const result = await runAdmin(config, io, { name: 'keys.list', organization });
  if (result.name === 'keys.list') {
    for (const k of result.keys) {
      io.out(
        `${k.id}\t${k.prefix}…\t${k.scopes.join(',')}\t${k.memberId ?? 'no member'}\tby ${k.createdBy}\t${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}`,
      );
    }
  }
  return 0;
}

async function revokeKey(rest: readonly string[], config: Config, io: Io): Promise<number> {
  const keyId = rest[0];
  if (!keyId) throw new UsageError('keys revoke needs a KEY_ID (key_…)');
  const result = await runAdmin(config, io, { name: 'keys.revoke', keyId });
  if (result.name === 'keys.revoke' && !result.found) {
    io.err(`no key ${keyId}`);
    return 1;
  }
  io.err(`revoked ${keyId}`);
  return 0;
}

function parseScopes(text: string | undefined): Scope[] {
  if (text === undefined) return [...DEFAULT_SCOPES];
  const scopes = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new UsageError(`--scopes takes a comma-separated list of ${SCOPES.join(', ')}; got '${text}'`);
  }
  return scopes as Scope[];
}
