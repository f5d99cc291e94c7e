/**
 * An organization's members: the people who act through keys, each with signer roles (the roles and the
 * scopes they grant are the core's, src/domain/access.ts), their emails and names; approval rules name the
 * roles whose votes count.
 */
import { MEMBER_ROLES, type MemberRole, type MemberStatus } from './access.ts';
import { validationError } from './errors.ts';

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
