/**
 * Members and keys that act for them, through HTTP: the admin scope guards /v1/members; a member's key
 * never has more than the member's roles grant, follows a role change and stops at removal; what it does is
 * recorded as the member's (`created_by`, evidence `actor_member`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

describe.each(BACKENDS)('members on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t.close();
  });

  it('adds, lists, changes and removes members with the admin scope; others are refused', async () => {
    const org = await newOrganization(t);
    expect((await api(t, 'GET', '/v1/members', { key: t.key })).statusCode).toBe(403);
    const added = await api(t, 'POST', '/v1/members', {
      key: org.key,
      body: { email: ' Grace@Example.COM ', roles: ['approver'], name: 'Grace' },
    });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.data).toMatchObject({
      object: 'member',
      email: 'grace@example.com',
      roles: ['approver'],
      status: 'active',
      name: 'Grace',
    });
    const twice = await api(t, 'POST', '/v1/members', {
      key: org.key,
      body: { email: 'grace@example.com', roles: ['viewer'] },
    });
    expect(twice.statusCode).toBe(409);
    expect(twice.data).toMatchObject({ code: 'member_exists', param: 'email' });
    const badEmail = await api(t, 'POST', '/v1/members', {
      key: org.key,
      body: { email: 'nobody', roles: ['viewer'] },
    });
    expect(badEmail.data).toMatchObject({ status: 400, param: 'email' });
    const badRole = await api(t, 'POST', '/v1/members', {
      key: org.key,
      body: { email: 'x@example.com', roles: ['owner'] },
    });
    expect(badRole.statusCode).toBe(400);
    expect(badRole.data.param).toBe('roles.0');

    const changed = await api(t, 'PATCH', `/v1/members/${added.data.id}`, {
      key: org.key,
      body: { roles: ['approver', 'compliance'] },
    });
    expect(changed.data.roles).toEqual(['approver', 'compliance']);
    const listed = await api(t, 'GET', '/v1/members?role=compliance', { key: org.key });
    expect(listed.data.data.map((m: { id: string }) => m.id)).toEqual([added.data.id]);
    const removed = await api(t, 'DELETE', `/v1/members/${added.data.id}`, { key: org.key });
    expect(removed.data.status).toBe('removed');
    const restored = await api(t, 'POST', '/v1/members', {
      key: org.key,
      body: { email: 'grace@example.com', roles: ['viewer'] },
    });
    expect(restored.statusCode).toBe(201);
    expect(restored.data).toMatchObject({ id: added.data.id, status: 'active', roles: ['viewer'] });
    const other = await newOrganization(t);
    expect((await api(t, 'GET', `/v1/members/${added.data.id}`, { key: other.key })).statusCode).toBe(404);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=member.update', { key: org.key });
    expect(evidence.data.data.map((r: { data: { change: string } }) => r.data.change)).toEqual([
      'restored',
      'removed',
      'roles_changed',
      'added',
    ]);
  });

  it('a member’s key has only what the roles grant, follows a role change at once, and stops at removal', async () => {
    const org = await newOrganization(t);
    const viewer = await org.member(['viewer'], 'vic@example.com');
    const wallet = await fundedWallet(t, '100.00', 'KES', org.key);
    const transfer = {
      source: wallet,
      destination: mobileMoney('+254711000401'),
      amount: '10.00',
      currency: 'KES',
    };
    expect((await api(t, 'GET', `/v1/wallets/${wallet}`, { key: viewer.key })).statusCode).toBe(200);
    const refused = await api(t, 'POST', '/v1/transfers', { key: viewer.key, body: transfer });
    expect(refused.statusCode).toBe(403);
    await api(t, 'PATCH', `/v1/members/${viewer.id}`, { key: org.key, body: { roles: ['initiator'] } });
    const created = await api(t, 'POST', '/v1/transfers', { key: viewer.key, body: transfer });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.data.created_by).toBe(viewer.id);
    await api(t, 'DELETE', `/v1/members/${viewer.id}`, { key: org.key });
    const gone = await api(t, 'GET', `/v1/wallets/${wallet}`, { key: viewer.key });
    expect(gone.statusCode).toBe(401);
    expect(gone.data.code).toBe('api_key_revoked');
  });

  it('an operator action by a member’s key names the member in the evidence, inside the hashed record', async () => {
    const org = await newOrganization(t);
    const officer = await org.member(['compliance']);
    const wallet = await fundedWallet(t, '0', 'KES', org.key);
    const frozen = await api(t, 'POST', `/v1/wallets/${wallet}/freeze`, {
      key: officer.key,
      body: { reason: 'fraud_suspected' },
    });
    expect(frozen.statusCode, frozen.body).toBe(200);
    const records = await api(t, 'GET', `/v1/wallets/${wallet}/evidence`, { key: officer.key });
    const record = records.data.data.find((r: { kind: string }) => r.kind === 'wallet.freeze');
    expect(record).toMatchObject({ actor: expect.stringMatching(/^key_/), actor_member: officer.id });
    const verified = await runAdminCommand(t.deps, { name: 'evidence.verify' });
    expect(verified.name === 'evidence.verify' && verified.chains.filter((c) => c.break)).toEqual([]);
  });

  it('a key for a member who is not one, or with scopes beyond the roles, is refused', async () => {
    const org = await newOrganization(t);
    await expect(
      runAdminCommand(t.deps, {
        name: 'keys.create',
        organization: org.name,
        member: 'ghost@example.com',
        operator: 'ops',
      }),
    ).rejects.toThrow(/not an active member/);
    await org.member(['viewer'], 'val@example.com');
    await expect(
      runAdminCommand(t.deps, {
        name: 'keys.create',
        organization: org.name,
        member: 'val@example.com',
        scopes: ['read', 'write'],
        operator: 'ops',
      }),
    ).rejects.toThrow(/cannot hold the write scope/);
  });
});
