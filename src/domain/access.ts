/**
 * Who may act, as every capability and the HTTP edge check it: the deployment's environment, the scopes a key
 * is granted, and the signer roles of the member a key acts for, with the scopes each role grants. A key that
 * acts for a member never has more than the member's roles grant.
 */

/**
 * A deployment serves one environment. `pilot` behaves as production (real rails, no simulation, no seed)
 * with volume caps per organization (src/domain/decisions/pilotCaps.ts): a first launch with bounded exposure.
 */
export const ENVIRONMENTS = ['sandbox', 'pilot', 'production'] as const;

export type Environment = (typeof ENVIRONMENTS)[number];

/** Pilot and production: real money, keys issued only past the launch gates (docs/GOING-LIVE.md). */
export function isLiveEnvironment(environment: Environment): boolean {
  return environment !== 'sandbox';
}

/**
 * `read` and `write` are an integrator's; `compliance` is an operator's (reviews, alerts, freezes, risk
 * overrides, AML rules, evidence), so that an integrator's ordinary key cannot clear its own case; `admin`
 * manages the organization's members and policies.
 */
export const SCOPES = ['read', 'write', 'compliance', 'admin'] as const;

export type Scope = (typeof SCOPES)[number];

/** What a key gets when no scopes are named: an integrator's. Operator scopes are only granted by name. */
export const DEFAULT_SCOPES: readonly Scope[] = ['read', 'write'];

/** `write`, `compliance` and `admin` imply `read`: a key that may change or judge a resource may also see it. */
export function grantsScope(granted: readonly string[], needed: Scope): boolean {
  return (
    granted.includes(needed) ||
    (needed === 'read' &&
      (granted.includes('write') || granted.includes('compliance') || granted.includes('admin')))
  );
}

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
