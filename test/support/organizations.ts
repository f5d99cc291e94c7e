/** A fresh organization with an admin key and members with keys, for authorization tests. */
import { randomBytes } from 'node:crypto';
import { runAdminCommand } from '../../src/app/admin.ts';
import { issueApiKey } from '../../src/modules/apiKeys/useCases/keys.ts';
import { TEST_OPERATOR, type TestApp } from './harness.ts';

export interface TestOrganization {
  name: string;
  organizationId: string;
  /** An organization-level key with read, write, compliance and admin (acting for no member). */
  key: string;
  /** Adds a member with these roles and returns a key acting for them, and their id. */
  member(roles: string[], email?: string): Promise<{ key: string; id: string; email: string }>;
}

/**
 * A new member of the organization with these roles and a key acting for them, issued through the
 * operator's CLI path: for decisions only a person takes (votes, reviews, freezes), which an
 * organization-level key (acting for no member) is refused.
 */
export async function memberKeyIn(
  t: TestApp,
  organization: string,
  roles: string[],
  email = `${roles.join('-')}-${randomBytes(3).toString('hex')}@example.com`,
): Promise<{ key: string; id: string; email: string }> {
  const added = await runAdminCommand(t.deps, { name: 'members.add', organization, email, roles });
  if (added.name !== 'members.add' || !added.member) throw new Error('member not added');
  const key = await runAdminCommand(t.deps, {
    name: 'keys.create',
    organization,
    member: email,
    operator: TEST_OPERATOR,
  });
  if (key.name !== 'keys.create') throw new Error('key not created');
  return { key: key.key, id: added.member.id, email };
}

export async function newOrganization(t: TestApp): Promise<TestOrganization> {
  const name = `Org ${randomBytes(4).toString('hex')}`;
  const issued = await issueApiKey(t.deps, {
    organizationName: name,
    scopes: ['read', 'write', 'compliance', 'admin'],
  });
  return {
    name,
    organizationId: issued.record.organizationId,
    key: issued.key,
    member: (roles, email) => memberKeyIn(t, name, roles, email),
  };
}
