/** A fresh organization with an admin key and members with keys, for authorization tests. */
import { randomBytes } from 'node:crypto';
import { runAdminCommand } from '../../src/app/admin.ts';
import { issueApiKey } from '../../src/app/apiKeys.ts';
import type { TestApp } from './harness.ts';

export interface TestOrganization {
  name: string;
  organizationId: string;
  /** An organization-level key with read, write, compliance and admin (acting for no member). */
  key: string;
  /** Adds a member with these roles and returns a key acting for them, and their id. */
  member(roles: string[], email?: string): Promise<{ key: string; id: string; email: string }>;
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
    async member(roles, email = `${roles.join('-')}-${randomBytes(3).toString('hex')}@example.com`) {
      const added = await runAdminCommand(t.deps, { name: 'members.add', organization: name, email, roles });
      if (added.name !== 'members.add' || !added.member) throw new Error('member not added');
      const key = await runAdminCommand(t.deps, { name: 'keys.create', organization: name, member: email });
      if (key.name !== 'keys.create') throw new Error('key not created');
      return { key: key.key, id: added.member.id, email };
    },
  };
}
