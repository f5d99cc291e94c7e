/**
 * Console sign-in: a member's password (Argon2id, through @node-rs/argon2), or a one-time link the
 * operator prints with `mkoba console-link`; sessions held as a token digest, ended at sign-out, after
 * CONSOLE_SESSION_IDLE_MINUTES without a request, after CONSOLE_SESSION_LIFETIME_HOURS, or when the
 * member is removed. A session acts with exactly the scopes the member's roles grant at each request, as
 * a key acting for the member does.
 */

import { hash, verify } from '@node-rs/argon2';
import type { Scope } from '../../domain/access.ts';
import { type MemberRole, scopesOfRoles } from '../../domain/access.ts';
import type { Voter } from '../../domain/approvals.ts';
import {
  CONSOLE_PASSWORD_CHARS_MAX,
  CONSOLE_SIGN_IN_LINK_TTL_MINUTES,
  type ConsoleSessionEndReason,
  type ConsoleSignInMethod,
  checkNewPassword,
  formatConsoleToken,
  hashConsoleToken,
  isConsoleToken,
  sessionExpiry,
  sessionNeedsTouch,
} from '../../domain/console.ts';
import { normaliseEmail } from '../../domain/contactDetails.ts';
import { AppError, validationError } from '../../domain/errors.ts';
import type { EvidenceActor } from '../../domain/evidence.ts';
import { findMember, findMemberByEmail, voterOf } from '../../modules/authorization/index.ts';
import {
  endSession,
  endSessionsOfMember,
  findLiveSession,
  findPasswordHash,
  findSignInCandidates,
  insertSession,
  insertSignInLink,
  savePasswordHash,
  touchSession,
  useSignInLink,
} from '../../store/repositories/console.ts';
import { findOrganization, findOrganizationByName } from '../../store/repositories/organizations.ts';
import type { Queryable } from '../../store/store.ts';
import type { Deps } from '../deps.ts';

/** Organizations one email is looked up in at sign-in; beyond this the member names the organization. */
export const CONSOLE_SIGN_IN_ORGANIZATIONS_MAX = 10;

/**
 * A hash of a password nobody has, verified when the email has no password so that an unknown email
 * takes as long to refuse as a wrong password (no telling which emails are members by timing).
 */
let decoyHash: Promise<string> | undefined;
function decoy(): Promise<string> {
  decoyHash ??= hash('mkoba console decoy password that no one can sign in with');
  return decoyHash;
}

/** A signed-in member, as each console request finds them. */
export interface ConsoleIdentity {
  sessionId: string;
  /** The session token from the cookie: the key of the session's CSRF token. */
  token: string;
  organizationId: string;
  organizationName: string;
  member: { id: string; email: string; name: string | null; roles: MemberRole[] };
  /** What the member's roles grant now: the same scopes a key acting for them gets. */
  scopes: Scope[];
  method: ConsoleSignInMethod;
}

/** Who acted, as evidence records it: the session, and the member who signed in. */
export function consoleActor(identity: ConsoleIdentity): EvidenceActor {
  return { type: 'console_session', id: identity.sessionId, member: identity.member.id };
}

/** The member as an approval voter (the vote records the session as the credential it came through). */
export function consoleVoter(identity: ConsoleIdentity): Voter {
  return voterOf(identity.member, identity.sessionId);
}

export interface SignedIn {
  token: string;
  identity: ConsoleIdentity;
}

async function startSession(
  tx: Queryable,
  deps: Deps,
  member: { id: string; organizationId: string; email: string; name: string | null; roles: MemberRole[] },
  organizationName: string,
  method: ConsoleSignInMethod,
): Promise<SignedIn> {
  const now = deps.now();
  const token = formatConsoleToken(deps.randomBytes(32));
  const sessionId = deps.newId('consoleSession');
  await insertSession(tx, {
    id: sessionId,
    tokenHash: hashConsoleToken(token),
    organizationId: member.organizationId,
    memberId: member.id,
    method,
    createdAt: now,
    lastSeenAt: now,
    endedAt: null,
    endReason: null,
  });
  return {
    token,
    identity: {
      sessionId,
      token,
      organizationId: member.organizationId,
      organizationName,
      member: { id: member.id, email: member.email, name: member.name, roles: member.roles },
      scopes: scopesOfRoles(member.roles),
      method,
    },
  };
}

export interface PasswordSignIn {
  email: string;
  password: string;
  /** Needed only when the email is a member of several organizations. */
  organization?: string | undefined;
}

/**
 * Signs in with a password, or returns undefined for any failure (unknown email, no password set, wrong
 * password): the caller says only that the email or password is wrong, and charges the failure to the
 * client's rate limit.
 */
export async function signInWithPassword(deps: Deps, input: PasswordSignIn): Promise<SignedIn | undefined> {
  let email: string;
  try {
    email = normaliseEmail(input.email);
  } catch {
    await verify(await decoy(), input.password).catch(() => false);
    return undefined;
  }
  if (input.password.length === 0 || [...input.password].length > CONSOLE_PASSWORD_CHARS_MAX)
    return undefined;
  const organization = input.organization?.trim() || undefined;
  const candidates = (
    await findSignInCandidates(deps.store, email, CONSOLE_SIGN_IN_ORGANIZATIONS_MAX)
  ).filter((c) => organization === undefined || c.organizationName === organization);
  const withPassword = candidates.filter((c) => c.passwordHash !== null);
  if (withPassword.length === 0) {
    await verify(await decoy(), input.password).catch(() => false);
    return undefined;
  }
  for (const candidate of withPassword) {
    if (await verify(candidate.passwordHash as string, input.password).catch(() => false)) {
      return deps.store.transaction((tx) =>
        startSession(tx, deps, candidate.member, candidate.organizationName, 'password'),
      );
    }
  }
  return undefined;
}

export interface IssuedSignInLink {
  token: string;
  memberId: string;
  email: string;
  organizationId: string;
  expiresAt: Date;
}

/** `mkoba console-link`: a one-time sign-in link for an active member of the organization of that name. */
export async function issueSignInLink(
  deps: Deps,
  organizationName: string,
  rawEmail: string,
): Promise<IssuedSignInLink> {
  const email = normaliseEmail(rawEmail, 'member');
  return deps.store.transaction(async (tx) => {
    const organization = await findOrganizationByName(tx, organizationName);
    const member = organization && (await findMemberByEmail(tx, organization.id, email));
    if (!organization || member?.status !== 'active') {
      throw validationError(
        'member',
        `${email} is not an active member of ${organizationName}; add them with mkoba members add`,
        'unknown_member',
      );
    }
    const now = deps.now();
    const token = formatConsoleToken(deps.randomBytes(32));
    const expiresAt = new Date(now.getTime() + CONSOLE_SIGN_IN_LINK_TTL_MINUTES * 60_000);
    await insertSignInLink(tx, {
      id: deps.newId('consoleSignInLink'),
      tokenHash: hashConsoleToken(token),
      organizationId: organization.id,
      memberId: member.id,
      createdAt: now,
      expiresAt,
      usedAt: null,
    });
    return { token, memberId: member.id, email, organizationId: organization.id, expiresAt };
  });
}

/** Uses a sign-in link (once, before it expires) and starts a session; undefined when it cannot be used. */
export async function signInWithLink(deps: Deps, token: string): Promise<SignedIn | undefined> {
  if (!isConsoleToken(token)) return undefined;
  return deps.store.transaction(async (tx) => {
    const link = await useSignInLink(tx, hashConsoleToken(token), deps.now());
    if (!link) return undefined;
    const member = await findMember(tx, link.organizationId, link.memberId);
    if (member?.status !== 'active') return undefined;
    const organization = await findOrganization(tx, link.organizationId);
    return startSession(tx, deps, member, organization?.name ?? '', 'link');
  });
}

export type SessionLookup =
  | { state: 'live'; identity: ConsoleIdentity }
  | { state: 'expired'; reason: ConsoleSessionEndReason }
  | { state: 'none' };

/** The session a cookie names, ending it first if it has expired or its member was removed. */
export async function loadSession(deps: Deps, token: string | undefined): Promise<SessionLookup> {
  if (token === undefined || !isConsoleToken(token)) return { state: 'none' };
  const session = await findLiveSession(deps.store, hashConsoleToken(token));
  if (!session) return { state: 'none' };
  const now = deps.now();
  const reason: ConsoleSessionEndReason | null =
    session.member.status !== 'active' ? 'member_removed' : sessionExpiry(session, now);
  if (reason !== null) {
    await endSession(deps.store, session.id, reason, now);
    return { state: 'expired', reason };
  }
  if (sessionNeedsTouch(session, now)) await touchSession(deps.store, session.id, now);
  const { member } = session;
  return {
    state: 'live',
    identity: {
      sessionId: session.id,
      token,
      organizationId: session.organizationId,
      organizationName: session.organizationName,
      member: { id: member.id, email: member.email, name: member.name, roles: member.roles },
      scopes: scopesOfRoles(member.roles),
      method: session.method,
    },
  };
}

export async function signOut(deps: Deps, identity: ConsoleIdentity): Promise<void> {
  await endSession(deps.store, identity.sessionId, 'signed_out', deps.now());
}

/** Whether the member has a console password yet (a member who signed in by link may not). */
export async function hasPassword(deps: Deps, memberId: string): Promise<boolean> {
  return (await findPasswordHash(deps.store, memberId)) !== undefined;
}

/**
 * Sets the member's password. When one is set already the current one is needed. The member's other
 * sessions end: whoever knew the old password is signed out.
 */
export async function changePassword(
  deps: Deps,
  identity: ConsoleIdentity,
  input: { current?: string | undefined; password: string; confirmation: string },
): Promise<{ sessionsEnded: number }> {
  checkNewPassword(input.password);
  if (input.password !== input.confirmation) {
    throw validationError('confirmation', 'The two new passwords differ.', 'mismatch');
  }
  const existing = await findPasswordHash(deps.store, identity.member.id);
  if (existing !== undefined && !(await verify(existing, input.current ?? '').catch(() => false))) {
    throw new AppError({
      status: 403,
      code: 'insufficient_permissions',
      title: 'Forbidden',
      detail: 'The current password is wrong.',
      param: 'current',
    });
  }
  const passwordHash = await hash(input.password);
  return deps.store.transaction(async (tx) => {
    const now = deps.now();
    await savePasswordHash(tx, identity.member.id, passwordHash, now);
    const sessionsEnded = await endSessionsOfMember(
      tx,
      identity.member.id,
      'signed_out',
      now,
      identity.sessionId,
    );
    return { sessionsEnded };
  });
}
