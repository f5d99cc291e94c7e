/**
 * An organization's members: the people who act through keys, each with signer roles. A role grants API
 * scopes, and approval rules name the roles whose votes count. A key that acts for a member never has more
 * than the member's roles grant.
 */
import type { Scope } from './apiKeys.ts';
import { validationError } from './errors.ts';

export const MEMBER_ROLES = ['initiator', 'approver', 'admin', 'compliance', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export const MEMBER_STATUSES = ['active', 'removed'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

/** What each role may do through the API; an approver's votes are checked against the rule, not a scope. */
export const ROLE_SCOPES: Record<MemberRole, readonly Scope[]> = {
  viewer: ['read'],
  approver: ['read'],
  initiator: ['read', 'write'],
  compliance: ['read', 'compliance'],
  admin: ['read', 'write', 'admin'],
};

/** The longest email address a mailbox can have (RFC 5321's path limit less the brackets). */
export const MEMBER_EMAIL_CHARS_MAX = 254;
export const MEMBER_NAME_CHARS_MAX = 200;

export interface Member {
  id: string;
  organizationId: string;
  email: string;
  name: string | null;
  roles: MemberRole[];
  status: MemberStatus;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

/** The scopes a member's roles grant, in SCOPES order without repeats. */
export function scopesOfRoles(roles: readonly MemberRole[]): Scope[] {
  const granted = new Set(roles.flatMap((role) => ROLE_SCOPES[role]));
  return (['read', 'write', 'compliance', 'admin'] as const).filter((scope) => granted.has(scope));
}

/** A key acting for a member keeps only the scopes both the key and the member's roles grant. */
export function effectiveScopes(keyScopes: readonly string[], roles: readonly MemberRole[]): string[] {
  const allowed = new Set<string>(scopesOfRoles(roles));
  return keyScopes.filter((scope) => allowed.has(scope));
}

const EMAIL_PATTERN =
  /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** An email as members are keyed by it: trimmed and lower-cased, or a 400 naming `param`. */
export function normaliseEmail(raw: string, param = 'email'): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > MEMBER_EMAIL_CHARS_MAX || !EMAIL_PATTERN.test(email)) {
    throw validationError(
      param,
      `${param} must be an email address such as ana@example.com`,
      'invalid_format',
    );
  }
  return email;
}

/** Roles as given: at least one, each known, without repeats (order kept). */
export function parseRoles(raw: readonly string[], param = 'roles'): MemberRole[] {
  if (raw.length === 0) {
    throw validationError(param, `${param} needs at least one of: ${MEMBER_ROLES.join(', ')}`, 'missing');
  }
  const roles: MemberRole[] = [];
  raw.forEach((role, i) => {
    if (!(MEMBER_ROLES as readonly string[]).includes(role)) {
      throw validationError(
        `${param}.${i}`,
        `'${role}' is not a role; roles are ${MEMBER_ROLES.join(', ')}`,
        'invalid_value',
      );
    }
    if (!roles.includes(role as MemberRole)) roles.push(role as MemberRole);
  });
  return roles;
}
