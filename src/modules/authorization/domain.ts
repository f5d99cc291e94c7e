/**
 * An organization's members: the people who act through keys, each with signer roles (the roles and the
 * scopes they grant are the core's, src/domain/access.ts), their emails and names; approval rules name the
 * roles whose votes count.
 */
import { MEMBER_ROLES, type MemberRole, type MemberStatus } from '../../domain/access.ts';
import { validationError } from '../../domain/errors.ts';

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
