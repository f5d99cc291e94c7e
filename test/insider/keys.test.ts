/**
 * Separation of duties against an insider minting keys (issue points 1 and 2): a member creates keys only
 * for themself, through the API and the console, with scopes at most their roles'; a key acting for no
 * member (a server key) never votes, clears, rejects, freezes or unfreezes, whatever its scopes; with only
 * her own keys an initiator cannot approve her own payout; a role removed narrows an existing key at once;
 * keys for other members come only from the operator's CLI path, which leaves evidence naming the operator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/app/admin.ts';
import { signedIn } from '../support/console.ts';
import { api, BACKENDS, startTestApp, type TestApp } from '../support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet, mobileMoney } from '../support/ledger.ts';
import { newOrganization, type TestOrganization } from '../support/organizations.ts';

const FOUR_EYES = {
  id: 'large_payouts',
  description: 'Payouts of 1,000.00 KES or more need a second pair of eyes',
  match: { amount: [{ currency: 'KES', gte: '1000.00' }] },
  action: 'require_approval',
  approval: { quorum: 1, roles: ['approver', 'admin'] },
};

describe.each(BACKENDS)('insider keys on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t.close();
  });

  async function organizationWithPolicy(): Promise<TestOrganization> {
    const org = await newOrganization(t);
    const put = await api(t, 'PUT', '/v1/policies', { key: org.key, body: { rules: [FOUR_EYES] } });
    expect(put.statusCode, put.body).toBe(200);
    return org;
  }

  const createKey = (key: string, body: unknown) => api(t, 'POST', '/v1/api-keys', { key, body });

  it('an admin cannot mint a key for another member, through the API or the console', async () => {
    const org = await newOrganization(t);
    const admin = await org.member(['admin']);
    const approver = await org.member(['approver']);

    // The API has no way to name a member: the body is strict.
    const named = await createKey(admin.key, { member: approver.id, scopes: ['read'] });
    expect(named.statusCode, named.body).toBe(400);
    expect(named.data.param).toBe('member');

    // The console's form, crafted to name another member, is refused.
    const client = await signedIn(t, org.name, admin.email);
    const page = await client.get('/console/api-keys');
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain(`value="${approver.email}"`);
    const crafted = await client.submit('/console/api-keys', '/console/api-keys', {
      scopes: ['read'],
      member: approver.email,
    });
    expect(crafted.statusCode, crafted.body).toBe(403);
    expect(crafted.body).not.toContain('id="new-key"');

    // What the admin does get is a key of their own.
    const own = await createKey(admin.key, { description: 'my laptop' });
    expect(own.statusCode, own.body).toBe(201);
    expect(own.data).toMatchObject({
      object: 'api_key',
      member: admin.id,
      created_by: admin.id,
      scopes: ['read', 'write', 'admin'],
      description: 'my laptop',
    });
    const viaConsole = await client.submit('/console/api-keys', '/console/api-keys', { scopes: ['read'] });
    expect(viaConsole.statusCode, viaConsole.body).toBe(200);
    const keyId = /<h2>New key (key_[0-9a-z]+)<\/h2>/.exec(viaConsole.body)?.[1];
    const listed = await api(t, 'GET', '/v1/api-keys?limit=100', { key: admin.key });
    expect(listed.statusCode, listed.body).toBe(200);
    const consoleKey = listed.data.data.find((k: { id: string }) => k.id === keyId);
    expect(consoleKey).toMatchObject({ member: admin.id, created_by: admin.id, scopes: ['read'] });
    // Only the admin's own keys were made: none acts for the approver but the operator's.
    const forApprover = listed.data.data.filter((k: { member: string | null }) => k.member === approver.id);
    expect(forApprover.map((k: { created_by: string }) => k.created_by)).toEqual(['operator:test-operator']);
  });

  it('an admin without the compliance role cannot mint a compliance key, nor widen a narrowed key', async () => {
    const org = await newOrganization(t);
    const admin = await org.member(['admin']);
    const refused = await createKey(admin.key, { scopes: ['read', 'compliance'] });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.data).toMatchObject({ code: 'beyond_member_roles', param: 'scopes' });

    const client = await signedIn(t, org.name, admin.email);
    const page = await client.get('/console/api-keys');
    expect(page.body).not.toContain('value="compliance"');
    const crafted = await client.submit('/console/api-keys', '/console/api-keys', {
      scopes: ['read', 'compliance'],
    });
    expect(crafted.statusCode, crafted.body).toBe(403);
    expect(crafted.body).not.toContain('id="new-key"');

    // A key narrowed to read and admin cannot mint one with write, though the roles grant it.
    const narrow = await createKey(admin.key, { scopes: ['read', 'admin'] });
    expect(narrow.statusCode, narrow.body).toBe(201);
    const wider = await createKey(narrow.data.key, { scopes: ['write'] });
    expect(wider.statusCode, wider.body).toBe(403);
    expect(wider.data.code).toBe('beyond_member_roles');

    // A key acting for no member creates no keys at all, whatever its scopes.
    const server = await createKey(org.key, { scopes: ['read'] });
    expect(server.statusCode, server.body).toBe(403);
    expect(server.data.code).toBe('member_required');
  });

  it('a key acting for no member, even with every scope, never votes, clears, rejects, freezes or unfreezes', async () => {
    const org = await organizationWithPolicy();
    const initiator = await org.member(['initiator']);
    const officer = await org.member(['compliance']);
    const wallet = await fundedWallet(t, '50000.00', 'KES', org.key);
    const payout = await api(t, 'POST', '/v1/transfers', {
      key: initiator.key,
      body: { source: wallet, destination: mobileMoney('+254711000301'), amount: '2500.00', currency: 'KES' },
    });
    expect(payout.data.status, payout.body).toBe('pending_approval');
    for (const vote of ['approve', 'reject']) {
      const refused = await api(t, 'POST', `/v1/approvals/${payout.data.approval}/${vote}`, {
        key: org.key,
        body: {},
      });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.data.code).toBe('member_required');
    }

    // A payout held for a sanctions review: the server key cannot clear it or reject it.
    const held = await api(t, 'POST', '/v1/transfers', {
      key: initiator.key,
      body: {
        source: wallet,
        destination: { ...mobileMoney('+254711000302'), name: 'Viktor Dragomirov' },
        amount: '500.00',
        currency: 'KES',
      },
    });
    expect(held.data.status, held.body).toBe('in_review');
    const review = (await api(t, 'GET', `/v1/reviews?transfer=${held.data.id}`, { key: org.key })).data
      .data[0];
    for (const decision of ['clear', 'reject']) {
      const refused = await api(t, 'POST', `/v1/reviews/${review.id}/${decision}`, {
        key: org.key,
        body: {},
      });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.data.code).toBe('member_required');
    }
    expect((await api(t, 'GET', `/v1/reviews/${review.id}`, { key: org.key })).data.status).toBe('open');

    // Freezing and unfreezing: refused to the server key, taken by the compliance officer.
    const refusedFreeze = await api(t, 'POST', `/v1/wallets/${wallet}/freeze`, {
      key: org.key,
      body: { reason: 'fraud_suspected' },
    });
    expect(refusedFreeze.statusCode, refusedFreeze.body).toBe(403);
    expect(refusedFreeze.data.code).toBe('member_required');
    const frozen = await api(t, 'POST', `/v1/wallets/${wallet}/freeze`, {
      key: officer.key,
      body: { reason: 'fraud_suspected' },
    });
    expect(frozen.statusCode, frozen.body).toBe(200);
    const refusedUnfreeze = await api(t, 'POST', `/v1/wallets/${wallet}/unfreeze`, {
      key: org.key,
      body: { reason: 'review_cleared' },
    });
    expect(refusedUnfreeze.statusCode, refusedUnfreeze.body).toBe(403);
    expect(refusedUnfreeze.data.code).toBe('member_required');
    expect((await api(t, 'GET', `/v1/wallets/${wallet}`, { key: org.key })).data.status).toBe('frozen');
    await expectLedgerHealthy(t);
  });

  it('with only her own keys, the initiator cannot approve her own payout: four eyes hold', async () => {
    const org = await organizationWithPolicy();
    // She holds every role a vote counts for, and may create keys.
    const insider = await org.member(['initiator', 'admin', 'approver']);
    const wallet = await fundedWallet(t, '50000.00', 'KES', org.key);
    const payout = await api(t, 'POST', '/v1/transfers', {
      key: insider.key,
      body: {
        source: wallet,
        destination: mobileMoney('+254711000303'),
        amount: '25000.00',
        currency: 'KES',
      },
    });
    expect(payout.data.status, payout.body).toBe('pending_approval');
    const minted = await createKey(insider.key, { description: 'second key' });
    expect(minted.statusCode, minted.body).toBe(201);
    expect(minted.data.member).toBe(insider.id);
    for (const key of [insider.key, minted.data.key]) {
      const vote = await api(t, 'POST', `/v1/approvals/${payout.data.approval}/approve`, { key, body: {} });
      expect(vote.statusCode, vote.body).toBe(403);
      expect(vote.data.code).toBe('self_approval_forbidden');
    }
    const approval = await api(t, 'GET', `/v1/approvals/${payout.data.approval}`, { key: org.key });
    expect(approval.data).toMatchObject({ status: 'pending', votes: [] });
    expect((await api(t, 'GET', `/v1/transfers/${payout.data.id}`, { key: org.key })).data.status).toBe(
      'pending_approval',
    );
    expect((await balanceOf(t, wallet, org.key)).pending).toBe('25000.00');
  });

  it('a role removed narrows an existing key at once, in the cache of this process too', async () => {
    const org = await newOrganization(t);
    const admin = await org.member(['admin']);
    const officer = await org.member(['compliance', 'admin']);
    // Her own key with compliance, used once so this process holds it.
    const own = await createKey(officer.key, { scopes: ['read', 'compliance', 'admin'] });
    expect(own.statusCode, own.body).toBe(201);
    expect((await api(t, 'GET', '/v1/reviews', { key: own.data.key })).statusCode).toBe(200);
    expect((await api(t, 'GET', '/v1/reviews', { key: officer.key })).statusCode).toBe(200);

    const changed = await api(t, 'PATCH', `/v1/members/${officer.id}`, {
      key: admin.key,
      body: { roles: ['admin'] },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    for (const key of [own.data.key, officer.key]) {
      const refused = await api(t, 'GET', '/v1/reviews', { key });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.data.code).toBe('insufficient_permissions');
      // Read repeatedly: no request between the change and its commit kept the old roles.
      expect((await api(t, 'GET', '/v1/reviews', { key })).statusCode).toBe(403);
      expect((await api(t, 'GET', '/v1/members', { key })).statusCode).toBe(200);
    }
  });

  it('the operator’s CLI path issues a key for another member, recorded with the operator who ran it', async () => {
    const org = await newOrganization(t);
    const admin = await org.member(['admin']);
    const approver = await org.member(['approver']);
    const issued = await runAdminCommand(t.deps, {
      name: 'keys.create',
      organization: org.name,
      member: approver.email,
      operator: 'amina',
    });
    if (issued.name !== 'keys.create') throw new Error('key not created');
    const listed = await api(t, 'GET', '/v1/api-keys?limit=100', { key: admin.key });
    expect(listed.statusCode, listed.body).toBe(200);
    const key = listed.data.data.find((k: { id: string }) => k.id === issued.keyId);
    expect(key).toMatchObject({
      object: 'api_key',
      member: approver.id,
      scopes: ['read', 'write', 'compliance', 'admin'],
      created_by: 'operator:amina',
      revoked_at: null,
    });
    expect(key.display_prefix).toBe(issued.key.slice(0, key.display_prefix.length));
    for (const k of listed.data.data) {
      expect(Object.keys(k).sort()).toEqual(
        [
          'created_at',
          'created_by',
          'description',
          'display_prefix',
          'id',
          'member',
          'object',
          'revoked_at',
          'scopes',
        ].sort(),
      );
    }
    const officer = await org.member(['compliance']);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=api_key.created&limit=100', { key: officer.key });
    expect(evidence.statusCode, evidence.body).toBe(200);
    const record = evidence.data.data.find(
      (r: { data: { key_id: string } }) => r.data.key_id === issued.keyId,
    );
    expect(record).toMatchObject({
      kind: 'api_key.created',
      actor: 'system',
      data: {
        key_id: issued.keyId,
        member: approver.id,
        operator: 'amina',
        created_by: 'operator:amina',
      },
    });
    // The console shows who created each key.
    const client = await signedIn(t, org.name, admin.email);
    expect((await client.get('/console/api-keys')).body).toContain('operator:amina');

    // An admin may revoke any key of the organization, recorded as evidence; another organization's is a 404.
    const revoked = await api(t, 'POST', `/v1/api-keys/${issued.keyId}/revoke`, { key: admin.key });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.data.revoked_at).not.toBeNull();
    expect((await api(t, 'GET', '/v1/wallets', { key: issued.key })).statusCode).toBe(401);
    const stranger = await newOrganization(t);
    const strangerAdmin = await stranger.member(['admin']);
    const adminKey = listed.data.data.find((k: { member: string | null }) => k.member === admin.id);
    const foreign = await api(t, 'POST', `/v1/api-keys/${adminKey.id}/revoke`, { key: strangerAdmin.key });
    expect(foreign.statusCode, foreign.body).toBe(404);
    expect((await api(t, 'GET', '/v1/members', { key: admin.key })).statusCode).toBe(200);
  });
});
