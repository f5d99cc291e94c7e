/**
 * Governed changes through HTTP: with a `change` rule on, a sensitive change (a role grant, a fee schedule,
 * an AML rule, a digital-asset route, a trust account, a rail partner, conversion rates, the policy) waits
 * for another member's approval (202), is not made meanwhile, is never approved by its proposer, and is made
 * by the approving vote with evidence naming proposer, approver and rule; rejected, expired or canceled it
 * is never made; a bad change is refused when proposed. Without the rule (the sandbox's default) changes
 * apply at once; pilot and production start with the rule for role grants, elevated keys, the policy and
 * conversion rates.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import type { EvidenceActor } from '../src/domain/evidence.ts';
import { DEFAULT_CHANGE_RULE_ID, GOVERNED_CHANGE_KINDS } from '../src/domain/governedChanges.ts';
import { issueApiKey, listOrganizationKeys } from '../src/modules/apiKeys/useCases/keys.ts';
import { expireDueApprovals } from '../src/modules/authorization/useCases/approvals.ts';
import { proposeIfGoverned } from '../src/modules/authorization/useCases/governedChanges.ts';
import { signedIn } from './support/console.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const RULE_ID = 'second-admin';
const changeRule = (kinds: readonly string[], extra: Record<string, unknown> = {}) => ({
  id: RULE_ID,
  applies_to: 'change',
  match: { kinds },
  action: 'require_approval',
  approval: { quorum: 1, roles: ['admin'], ...extra },
});
/** Every kind but the policy's own, so the test can still write the policy. */
const KINDS_BUT_POLICY = GOVERNED_CHANGE_KINDS.filter((k) => k !== 'policy');

type Member = { key: string; id: string; email: string };

/** A key waiting for approval as createOwnApiKeyGoverned stores it (before its hash is sealed). */
const pendingPayload = (keyId: string) => ({
  key_id: keyId,
  key_hash: 'ab'.repeat(32),
  display_prefix: 'sk_sandbox_abcd',
  scopes: ['read', 'admin'],
  description: null,
});

describe.each(BACKENDS)('governed changes on %s', (backend) => {
  let t: TestApp;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  /** An organization with the change rule on (for `kinds`) and two admins, Alice and Bob. */
  async function governed(
    kinds: readonly string[] = KINDS_BUT_POLICY,
    extra: Record<string, unknown> = {},
  ): Promise<{ org: TestOrganization; alice: Member; bob: Member; version: number }> {
    const org = await newOrganization(t);
    const put = await api(t, 'PUT', '/v1/policies', {
      key: org.key,
      body: { rules: [changeRule(kinds, extra)] },
    });
    expect(put.statusCode, put.body).toBe(200);
    const alice = await org.member(['admin']);
    const bob = await org.member(['admin']);
    return { org, alice, bob, version: put.data.version };
  }

  const vote = (member: Member, approval: string, decision: 'approve' | 'reject' = 'approve') =>
    api(t, 'POST', `/v1/approvals/${approval}/${decision}`, { key: member.key, body: {} });

  const change = async (org: TestOrganization, id: string) =>
    (await api(t, 'GET', `/v1/changes/${id}`, { key: org.key })).data;

  it('a role grant waits for a second admin: not granted meanwhile, the proposer cannot approve, the approval grants it with evidence and events', async () => {
    const { org, alice, bob, version } = await governed();
    const carol = await org.member(['viewer']);
    const proposed = await api(t, 'PATCH', `/v1/members/${carol.id}`, {
      key: alice.key,
      body: { roles: ['viewer', 'admin'] },
    });
    expect(proposed.statusCode, proposed.body).toBe(202);
    expect(proposed.data).toMatchObject({
      object: 'change',
      kind: 'role_grant',
      action: 'update',
      target_id: carol.id,
      payload: { roles: ['viewer', 'admin'] },
      status: 'pending',
      proposed_by: alice.id,
      policy_version: version,
      rule: RULE_ID,
      applied_at: null,
    });
    const approvalId = proposed.data.approval;
    expect(approvalId).toMatch(/^apr_/);
    // Not granted while it waits.
    expect((await api(t, 'GET', `/v1/members/${carol.id}`, { key: org.key })).data.roles).toEqual(['viewer']);
    const approval = (await api(t, 'GET', `/v1/approvals/${approvalId}`, { key: org.key })).data;
    expect(approval).toMatchObject({
      status: 'pending',
      resource: { type: 'change', id: proposed.data.id },
      initiated_by: alice.id,
      rule: RULE_ID,
    });
    // The proposer never approves her own change, however she asks.
    const own = await vote(alice, approvalId);
    expect(own.statusCode).toBe(403);
    expect(own.data.code).toBe('self_approval_forbidden');
    expect((await change(org, proposed.data.id)).status).toBe('pending');
    // A key acting for no member does not vote either.
    expect(
      (await api(t, 'POST', `/v1/approvals/${approvalId}/approve`, { key: org.key, body: {} })).statusCode,
    ).toBe(403);

    const approved = await vote(bob, approvalId);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.data.status).toBe('approved');
    const applied = await change(org, proposed.data.id);
    expect(applied).toMatchObject({ status: 'applied', failure: null });
    expect(applied.applied_at).not.toBeNull();
    expect((await api(t, 'GET', `/v1/members/${carol.id}`, { key: org.key })).data.roles).toEqual([
      'viewer',
      'admin',
    ]);

    const evidence = await api(t, 'GET', '/v1/evidence?kind=change.application', { key: org.key });
    expect(evidence.data.data).toHaveLength(1);
    expect(evidence.data.data[0].data).toMatchObject({
      change_id: proposed.data.id,
      kind: 'role_grant',
      status: 'applied',
      proposed_by: alice.id,
      approved_by: [{ member: bob.id, role: 'admin' }],
      approval_id: approvalId,
      policy_version: version,
      rule: RULE_ID,
    });
    const grants = await api(t, 'GET', '/v1/evidence?kind=member.update', { key: org.key });
    expect(grants.data.data[0].data).toMatchObject({ member_id: carol.id, change: 'roles_changed' });
    const updates = (
      await api(t, 'GET', '/v1/events?type=approval.updated&limit=100', { key: org.key })
    ).data.data
      .filter((e: any) => e.data.approval_id === approvalId)
      .map((e: any) => e.data.status);
    expect(updates.sort()).toEqual(['approved', 'pending']);
    const changes = (
      await api(t, 'GET', '/v1/events?type=change.updated&limit=100', { key: org.key })
    ).data.data
      .filter((e: any) => e.data.change_id === proposed.data.id)
      .map((e: any) => e.data.status);
    expect(changes.sort()).toEqual(['applied', 'pending']);
  });

  it('adding a member with roles waits too; a name alone applies at once', async () => {
    const { org, alice, bob } = await governed();
    const proposed = await api(t, 'POST', '/v1/members', {
      key: alice.key,
      body: { email: 'dave@example.com', roles: ['admin'] },
    });
    expect(proposed.statusCode, proposed.body).toBe(202);
    expect(proposed.data).toMatchObject({ kind: 'role_grant', action: 'add', target_id: null });
    const before = await api(t, 'GET', '/v1/members?limit=100', { key: org.key });
    expect(before.data.data.map((m: any) => m.email)).not.toContain('dave@example.com');
    expect((await vote(bob, proposed.data.approval)).statusCode).toBe(200);
    const applied = await change(org, proposed.data.id);
    expect(applied.status).toBe('applied');
    expect(applied.target_id).toMatch(/^mem_/);
    const dave = (await api(t, 'GET', `/v1/members/${applied.target_id}`, { key: org.key })).data;
    expect(dave).toMatchObject({ email: 'dave@example.com', roles: ['admin'] });
    const renamed = await api(t, 'PATCH', `/v1/members/${bob.id}`, { key: alice.key, body: { name: 'Bob' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
  });

  it('a rejected change is not made; nor is an expired one; the proposer may cancel, no one else', async () => {
    const { org, alice, bob } = await governed(KINDS_BUT_POLICY, { expires_in_seconds: 60 });
    const carol = await org.member(['viewer']);
    const grant = () =>
      api(t, 'PATCH', `/v1/members/${carol.id}`, { key: alice.key, body: { roles: ['admin'] } });

    const rejected = (await grant()).data;
    const no = await vote(bob, rejected.approval, 'reject');
    expect(no.statusCode, no.body).toBe(200);
    expect(no.data.status).toBe('rejected');
    expect((await change(org, rejected.id)).status).toBe('rejected');
    expect((await api(t, 'GET', `/v1/members/${carol.id}`, { key: org.key })).data.roles).toEqual(['viewer']);

    const expiring = (await grant()).data;
    const approval = (await api(t, 'GET', `/v1/approvals/${expiring.approval}`, { key: org.key })).data;
    t.deps.now = () => new Date(Date.parse(approval.expires_at) + 1);
    try {
      const late = await vote(bob, expiring.approval);
      expect(late.statusCode).toBe(409);
      expect(await expireDueApprovals(t.deps)).toBeGreaterThanOrEqual(1);
    } finally {
      t.deps.now = realNow;
    }
    expect((await change(org, expiring.id)).status).toBe('expired');
    expect((await api(t, 'GET', `/v1/members/${carol.id}`, { key: org.key })).data.roles).toEqual(['viewer']);

    const canceling = (await grant()).data;
    const byBob = await api(t, 'POST', `/v1/changes/${canceling.id}/cancel`, { key: bob.key });
    expect(byBob.statusCode).toBe(403);
    expect(byBob.data.code).toBe('not_proposer');
    const byAlice = await api(t, 'POST', `/v1/changes/${canceling.id}/cancel`, { key: alice.key });
    expect(byAlice.statusCode, byAlice.body).toBe(200);
    expect(byAlice.data.status).toBe('canceled');
    expect((await api(t, 'GET', `/v1/approvals/${canceling.approval}`, { key: org.key })).data.status).toBe(
      'canceled',
    );
    expect((await vote(bob, canceling.approval)).statusCode).toBe(409);
    expect((await api(t, 'POST', `/v1/changes/${canceling.id}/cancel`, { key: alice.key })).statusCode).toBe(
      409,
    );
    expect((await api(t, 'GET', `/v1/members/${carol.id}`, { key: org.key })).data.roles).toEqual(['viewer']);

    const listed = await api(t, 'GET', '/v1/changes?kind=role_grant&limit=10', { key: carol.key });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.data.data.map((c: any) => c.status)).toEqual(['canceled', 'expired', 'rejected']);
    const pending = await api(t, 'GET', '/v1/changes?status=pending', { key: org.key });
    expect(pending.data.data).toEqual([]);
  });

  it('a change no longer possible when approved fails, naming why, and writes nothing of it', async () => {
    const { org, alice, bob } = await governed();
    const carol = await org.member(['viewer']);
    const proposed = await api(t, 'PATCH', `/v1/members/${carol.id}`, {
      key: alice.key,
      body: { roles: ['admin'] },
    });
    expect(proposed.statusCode, proposed.body).toBe(202);
    const removed = await api(t, 'DELETE', `/v1/members/${carol.id}`, { key: alice.key });
    expect(removed.statusCode, removed.body).toBe(200);
    const approved = await vote(bob, proposed.data.approval);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.data.status).toBe('approved');
    const failed = await change(org, proposed.data.id);
    expect(failed).toMatchObject({
      status: 'failed',
      failure: { code: 'invalid_state_transition' },
      applied_at: null,
    });
    expect((await api(t, 'GET', `/v1/members/${carol.id}`, { key: org.key })).data).toMatchObject({
      status: 'removed',
      roles: ['viewer'],
    });
    const evidence = await api(t, 'GET', '/v1/evidence?kind=change.application', { key: org.key });
    expect(evidence.data.data[0].data).toMatchObject({
      change_id: proposed.data.id,
      status: 'failed',
      failure_code: 'invalid_state_transition',
    });
  });

  it('a bad change is refused when proposed, not when approved, and nothing waits', async () => {
    const { org, alice } = await governed();
    const noSuchMember = await api(t, 'PATCH', '/v1/members/mem_00000000000000000000000000', {
      key: alice.key,
      body: { roles: ['admin'] },
    });
    expect(noSuchMember.statusCode, noSuchMember.body).toBe(404);
    const badFee = await api(t, 'PUT', '/v1/fee-schedule', {
      key: alice.key,
      body: { rules: [{ id: 'x', rail: 'internal', currency: 'KES', type: 'fixed', fixed: 'ten' }] },
    });
    expect(badFee.statusCode, badFee.body).toBe(400);
    expect(badFee.data.param).toMatch(/^rules\.0/);
    const badRate = await api(t, 'PUT', '/v1/conversion-rates', {
      key: org.key,
      body: { rates: [{ from: 'KES', to: 'GHS', rate: '1' }] },
    });
    expect(badRate.statusCode, badRate.body).toBe(400);
    expect((await api(t, 'GET', '/v1/changes', { key: org.key })).data.data).toEqual([]);
    expect((await api(t, 'GET', '/v1/approvals?status=pending', { key: org.key })).data.data).toEqual([]);
  });

  it('each kind waits and is made by the approving vote', async () => {
    const { org, alice, bob } = await governed();
    async function approveAndApply(proposed: { statusCode: number; body: string; data: any }, kind: string) {
      expect(proposed.statusCode, proposed.body).toBe(202);
      expect(proposed.data.kind).toBe(kind);
      const approved = await vote(bob, proposed.data.approval);
      expect(approved.statusCode, approved.body).toBe(200);
      const applied = await change(org, proposed.data.id);
      expect(applied.status, JSON.stringify(applied)).toBe('applied');
      return applied;
    }

    // Fee schedule.
    const fees0 = (await api(t, 'GET', '/v1/fee-schedule', { key: org.key })).data.version;
    await approveAndApply(
      await api(t, 'PUT', '/v1/fee-schedule', {
        key: alice.key,
        body: {
          rules: [{ id: 'internal_kes', rail: 'internal', currency: 'KES', type: 'fixed', fixed: '5.00' }],
        },
      }),
      'fee_schedule',
    );
    const fees = (await api(t, 'GET', '/v1/fee-schedule', { key: org.key })).data;
    expect(fees.version).toBe(fees0 + 1);
    expect(fees.created_by).toBe(alice.id);

    // AML rule (compliance scope: the organization's key proposes, Alice and Bob are admins).
    const rule = await approveAndApply(
      await api(t, 'POST', '/v1/aml/rules', {
        key: org.key,
        body: {
          name: 'Big payouts',
          type: 'single_transfer_threshold',
          parameters: { currency: 'KES', amount: '250.00' },
          action: 'block',
        },
      }),
      'aml_rule',
    );
    expect((await api(t, 'GET', `/v1/aml/rules/${rule.target_id}`, { key: org.key })).data.name).toBe(
      'Big payouts',
    );

    // Digital-asset route.
    await approveAndApply(
      await api(t, 'PUT', '/v1/digital-asset-routes/USDC/polygon', {
        key: org.key,
        body: { status: 'disabled', limits: { single_max: '100.00' } },
      }),
      'digital_asset_route',
    );
    const routes = (await api(t, 'GET', '/v1/digital-asset-routes', { key: org.key })).data.data;
    expect(routes.find((r: any) => r.asset === 'USDC' && r.network === 'polygon')).toMatchObject({
      status: 'disabled',
      limits: { single_max: '100.000000' },
    });

    // Trust account.
    const account = await approveAndApply(
      await api(t, 'POST', '/v1/trust-accounts', {
        key: alice.key,
        body: { currency: 'KES', bank: 'Equity Bank', account_reference: `TRUST-${org.name}` },
      }),
      'trust_account',
    );
    expect(account.target_id).toMatch(/^ta_/);
    expect(
      (await api(t, 'GET', `/v1/trust-accounts/${account.target_id}`, { key: org.key })).statusCode,
    ).toBe(200);

    // Rail partner: its credentials are sealed while it waits, and never shown.
    const partner = await api(t, 'POST', '/v1/rail-partners', {
      key: alice.key,
      body: {
        partner: 'mpesa_daraja',
        settings: {
          base_url: 'http://127.0.0.1:9',
          short_code: '600000',
          initiator_name: 'testapi',
          stk_short_code: '174379',
        },
        credentials: {
          consumer_key: 'ck-secret-value',
          consumer_secret: 'cs-secret-value',
          security_credential: 'sc-secret-value',
          passkey: 'pk-secret-value',
        },
      },
    });
    expect(partner.data?.payload?.credentials, partner.body).toBe('[sealed]');
    expect(partner.body).not.toContain('secret-value');
    const configured = await approveAndApply(partner, 'rail_partner');
    expect(configured.target_id).toMatch(/^rp_/);
    const shown = await api(t, 'GET', `/v1/rail-partners/${configured.target_id}`, { key: org.key });
    expect(shown.statusCode, shown.body).toBe(200);
    expect(shown.data.credentials).toEqual(
      expect.arrayContaining(['consumer_key', 'consumer_secret', 'security_credential', 'passkey']),
    );

    // Conversion rates.
    await approveAndApply(
      await api(t, 'PUT', '/v1/conversion-rates', {
        key: org.key,
        body: { rates: [{ from: 'GHS', to: 'USDC', rate: '0.0650' }] },
      }),
      'conversion_rate',
    );
    expect((await api(t, 'GET', '/v1/conversion-rates', { key: org.key })).data.data).toEqual([
      expect.objectContaining({ from: 'GHS', to: 'USDC', rate: '0.065' }),
    ]);

    // The policy: a `change` rule naming `policy` holds a policy change (its own record) for approval.
    const withPolicy = await api(t, 'PUT', '/v1/policies', {
      key: alice.key,
      body: { rules: [changeRule([...KINDS_BUT_POLICY, 'policy'])] },
    });
    expect(withPolicy.statusCode, withPolicy.body).toBe(200);
    const policyChange = await api(t, 'PUT', '/v1/policies', { key: alice.key, body: { rules: [] } });
    expect(policyChange.statusCode, policyChange.body).toBe(202);
    expect(policyChange.data).toMatchObject({ object: 'policy_change', status: 'pending_approval' });
    expect((await vote(alice, policyChange.data.approval)).data.code).toBe('self_approval_forbidden');
    expect((await vote(bob, policyChange.data.approval)).statusCode).toBe(200);
    const policy = (await api(t, 'GET', '/v1/policies', { key: org.key })).data;
    expect(policy).toMatchObject({ version: withPolicy.data.version + 1, rules: [] });
  });

  it('an api_key change only ever makes the proposer’s own key, in the change’s organization', async () => {
    const { org, alice, bob } = await governed();
    const propose = (payload: object, actor: EvidenceActor) =>
      t.deps.store.transaction((tx) =>
        proposeIfGoverned(
          tx,
          t.deps,
          org.organizationId,
          { kind: 'api_key', action: 'create', targetId: null, payload },
          actor,
        ),
      );
    const asAlice: EvidenceActor = {
      type: 'api_key',
      id: 'key_00000000000000000000000000',
      member: alice.id,
    };
    expect(await propose({ scopes: ['read', 'write'] }, asAlice)).toBeNull();
    // A payload naming another organization, another member or a key of its choosing is refused outright.
    for (const payload of [
      { organizationName: 'Another Org', scopes: ['read', 'admin'] },
      { memberEmail: bob.email, scopes: ['read', 'admin'] },
      { key: 'sk_sandbox_chosen', scopes: ['read', 'admin'] },
      { ...pendingPayload('key_00000000000000000000000001'), member: bob.id },
    ]) {
      await expect(propose(payload, asAlice)).rejects.toMatchObject({ code: 'validation_error' });
    }
    // Proposed by a key that acts for no member, it could make no one's key: refused when proposed.
    await expect(
      propose(pendingPayload('key_00000000000000000000000002'), {
        type: 'api_key',
        id: 'key_00000000000000000000000003',
      }),
    ).rejects.toMatchObject({ code: 'member_required' });
    expect((await api(t, 'GET', '/v1/changes?kind=api_key', { key: org.key })).data.data).toEqual([]);

    // A well-formed one is Alice's own key when Bob approves it, whoever approves.
    const pending = await propose(pendingPayload('key_00000000000000000000000004'), asAlice);
    expect(pending).toMatchObject({ kind: 'api_key', status: 'pending', proposedBy: alice.id });
    expect((await vote(bob, pending?.approvalId as string)).statusCode).toBe(200);
    const applied = await change(org, pending?.id as string);
    expect(applied).toMatchObject({ status: 'applied', target_id: 'key_00000000000000000000000004' });
    const keys = await listOrganizationKeys(t.deps, org.name);
    expect(keys.find((k) => k.id === applied.target_id)).toMatchObject({
      memberId: alice.id,
      createdBy: alice.id,
      scopes: ['read', 'admin'],
    });
    expect(await listOrganizationKeys(t.deps, 'Another Org')).toEqual([]);
  });

  it('without a change rule (the sandbox default) changes apply at once, as before', async () => {
    const org = await newOrganization(t);
    const policy = (await api(t, 'GET', '/v1/policies', { key: org.key })).data;
    expect(policy.rules).toEqual([]);
    const alice = await org.member(['admin']);
    const carol = await org.member(['viewer']);
    const granted = await api(t, 'PATCH', `/v1/members/${carol.id}`, {
      key: alice.key,
      body: { roles: ['admin'] },
    });
    expect(granted.statusCode, granted.body).toBe(200);
    expect(granted.data.roles).toEqual(['admin']);
    const rates = await api(t, 'PUT', '/v1/conversion-rates', {
      key: org.key,
      body: { rates: [{ from: 'GHS', to: 'USDC', rate: '0.0650' }] },
    });
    expect(rates.statusCode, rates.body).toBe(200);
    expect((await api(t, 'GET', '/v1/changes', { key: org.key })).data.data).toEqual([]);
  });
});

describe.each(BACKENDS)('the default of pilot and production on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'production');
  });
  afterAll(async () => {
    await t.close();
  });

  it('starts with a second admin for role grants, elevated keys, the policy and conversion rates', async () => {
    const policy = (await api(t, 'GET', '/v1/policies')).data;
    expect(policy.version).toBe(1);
    expect(policy.rules).toEqual([
      expect.objectContaining({
        id: DEFAULT_CHANGE_RULE_ID,
        applies_to: 'change',
        match: { kinds: ['role_grant', 'api_key', 'policy', 'conversion_rate', 'transfer_reversal'] },
        action: 'require_approval',
        approval: expect.objectContaining({ quorum: 1, roles: ['admin'] }),
      }),
    ]);
    const organization = 'Production Org';
    const addAdmin = async (email: string) => {
      const added = await runAdminCommand(t.deps, {
        name: 'members.add',
        organization,
        email,
        roles: ['admin'],
      });
      if (added.name !== 'members.add' || !added.member) throw new Error('member not added');
      const key = await issueApiKey(t.deps, { organizationName: organization, memberEmail: email });
      return { id: added.member.id, key: key.key };
    };
    const alice = await addAdmin('alice@example.com');
    const bob = await addAdmin('bob@example.com');
    const grant = await api(t, 'POST', '/v1/members', {
      key: alice.key,
      body: { email: 'carol@example.com', roles: ['compliance'] },
    });
    expect(grant.statusCode, grant.body).toBe(202);
    expect(grant.data).toMatchObject({ kind: 'role_grant', rule: DEFAULT_CHANGE_RULE_ID, policy_version: 1 });
    // The policy itself: a change waits for the second admin.
    const policyChange = await api(t, 'PUT', '/v1/policies', { key: alice.key, body: { rules: [] } });
    expect(policyChange.statusCode, policyChange.body).toBe(202);
    expect(
      (await api(t, 'POST', `/v1/approvals/${grant.data.approval}/approve`, { key: bob.key, body: {} }))
        .statusCode,
    ).toBe(200);
    expect((await api(t, 'GET', `/v1/changes/${grant.data.id}`)).data.status).toBe('applied');
    // Fee schedules are not in the default: they apply at once.
    const fees = await api(t, 'PUT', '/v1/fee-schedule', { key: alice.key, body: { rules: [] } });
    expect(fees.statusCode, fees.body).toBe(200);
  });
});

describe.each(BACKENDS)('an elevated key of one’s own in production on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'production');
  });
  afterAll(async () => {
    await t.close();
  });

  /** A production organization (the default rule on) with two admins, Alice and Bob. */
  async function production() {
    const org = await newOrganization(t);
    // Keys issued on the server directly: the CLI issues none while the launch gates are open.
    const member = async (roles: string[]) => {
      const email = `${roles.join('-')}-${randomBytes(3).toString('hex')}@example.com`;
      const added = await runAdminCommand(t.deps, {
        name: 'members.add',
        organization: org.name,
        email,
        roles,
      });
      if (added.name !== 'members.add' || !added.member) throw new Error('member not added');
      const key = await issueApiKey(t.deps, { organizationName: org.name, memberEmail: email });
      return { id: added.member.id, key: key.key, email };
    };
    return { org, alice: await member(['admin']), bob: await member(['admin']), member };
  }
  const createKey = (key: string, body: unknown, idempotencyKey?: string) =>
    api(t, 'POST', '/v1/api-keys', {
      key,
      body,
      ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
    });
  const vote = (key: string, approval: string, decision: 'approve' | 'reject' = 'approve') =>
    api(t, 'POST', `/v1/approvals/${approval}/${decision}`, { key, body: {} });
  const storedPayload = async (changeId: string) =>
    JSON.stringify(
      (await t.deps.store.query('SELECT payload FROM governed_changes WHERE id = $1', [changeId]))[0],
    );

  it('waits for a second admin: shown once, refused until approved, never approved by its proposer, then exactly its scopes', async () => {
    const { org, alice, bob, member } = await production();
    const idempotencyKey = `elevated-${alice.id}`;
    const proposed = await createKey(alice.key, { scopes: ['read', 'admin'] }, idempotencyKey);
    expect(proposed.statusCode, proposed.body).toBe(202);
    expect(proposed.data).toMatchObject({
      object: 'change',
      kind: 'api_key',
      action: 'create',
      status: 'pending',
      proposed_by: alice.id,
      rule: DEFAULT_CHANGE_RULE_ID,
      target_id: null,
      payload: { scopes: ['read', 'admin'], key_hash: '[sealed]', description: null },
    });
    const secret: string = proposed.data.key;
    expect(secret).toMatch(/^sk_live_/);
    const keyId: string = proposed.data.payload.key_id;
    expect(proposed.data.payload.display_prefix).toBe(
      secret.slice(0, proposed.data.payload.display_prefix.length),
    );

    // Neither the secret nor its hash is stored with the change, nor shown by it; the idempotency record
    // holds the answer sealed, and a retry replays it to the same request.
    const hash = createHash('sha256').update(secret).digest('hex');
    const stored = await storedPayload(proposed.data.id);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(hash);
    const shown = await api(t, 'GET', `/v1/changes/${proposed.data.id}`, { key: bob.key });
    expect(shown.body).not.toContain(secret);
    expect(shown.body).not.toContain(hash);
    const records = JSON.stringify(
      await t.deps.store.query('SELECT response_text FROM idempotency_records WHERE idempotency_key = $1', [
        idempotencyKey,
      ]),
    );
    expect(records).not.toContain(secret);
    const replay = await createKey(alice.key, { scopes: ['read', 'admin'] }, idempotencyKey);
    expect(replay.statusCode).toBe(202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.data).toEqual(proposed.data);
    // The same Idempotency-Key and body from another admin (her approver) never replays her key.
    const replayedToBob = await createKey(bob.key, { scopes: ['read', 'admin'] }, idempotencyKey);
    expect(replayedToBob.statusCode, replayedToBob.body).toBe(422);
    expect(replayedToBob.data.code).toBe('idempotency_key_reused');
    expect(replayedToBob.body).not.toContain(secret);
    expect((await api(t, 'GET', '/v1/changes?kind=api_key', { key: bob.key })).data.data).toHaveLength(1);

    // Until approved the key does not exist.
    const early = await api(t, 'GET', '/v1/members', { key: secret });
    expect(early.statusCode, early.body).toBe(401);
    expect(early.data.code).toBe('invalid_api_key');
    const listed = await api(t, 'GET', '/v1/api-keys?limit=100', { key: bob.key });
    expect(listed.data.data.map((k: { id: string }) => k.id)).not.toContain(keyId);
    // She cannot approve her own, with either key.
    const own = await vote(alice.key, proposed.data.approval);
    expect(own.statusCode, own.body).toBe(403);
    expect(own.data.code).toBe('self_approval_forbidden');
    expect((await vote(secret, proposed.data.approval)).statusCode).toBe(401);
    expect((await api(t, 'GET', '/v1/members', { key: secret })).statusCode).toBe(401);

    const approved = await vote(bob.key, proposed.data.approval);
    expect(approved.statusCode, approved.body).toBe(200);
    const applied = (await api(t, 'GET', `/v1/changes/${proposed.data.id}`, { key: org.key })).data;
    expect(applied).toMatchObject({ status: 'applied', target_id: keyId });
    // Now it works, with exactly the scopes asked for: admin, but not write.
    expect((await api(t, 'GET', '/v1/members', { key: secret })).statusCode).toBe(200);
    const customer = await api(t, 'POST', '/v1/customers', {
      key: secret,
      body: { type: 'individual', name: 'Someone' },
    });
    expect(customer.statusCode, customer.body).toBe(403);
    expect(customer.data.code).toBe('insufficient_permissions');
    const keys = (await api(t, 'GET', '/v1/api-keys?limit=100', { key: bob.key })).data.data;
    expect(keys.find((k: { id: string }) => k.id === keyId)).toMatchObject({
      member: alice.id,
      created_by: alice.id,
      scopes: ['read', 'admin'],
      revoked_at: null,
    });
    const evidence = await api(t, 'GET', '/v1/evidence?kind=api_key.created&limit=100', {
      key: (await member(['compliance'])).key,
    });
    expect(
      evidence.data.data.filter((r: { data: { key_id: string } }) => r.data.key_id === keyId),
    ).toHaveLength(1);
  });

  it('rejected or canceled, the key never works; a read/write key is made at once', async () => {
    const { org, alice, bob } = await production();
    const rejected = await createKey(alice.key, { scopes: ['read', 'write', 'admin'] });
    expect(rejected.statusCode, rejected.body).toBe(202);
    expect((await vote(bob.key, rejected.data.approval, 'reject')).statusCode).toBe(200);
    expect((await api(t, 'GET', `/v1/changes/${rejected.data.id}`, { key: org.key })).data.status).toBe(
      'rejected',
    );
    const canceled = await createKey(alice.key, { scopes: ['read', 'admin'] });
    expect(canceled.statusCode, canceled.body).toBe(202);
    const cancel = await api(t, 'POST', `/v1/changes/${canceled.data.id}/cancel`, { key: alice.key });
    expect(cancel.statusCode, cancel.body).toBe(200);
    for (const secret of [rejected.data.key, canceled.data.key]) {
      const refused = await api(t, 'GET', '/v1/wallets', { key: secret });
      expect(refused.statusCode, refused.body).toBe(401);
      expect(refused.data.code).toBe('invalid_api_key');
    }
    const keys = (await api(t, 'GET', '/v1/api-keys?limit=100', { key: bob.key })).data.data;
    const ids = keys.map((k: { id: string }) => k.id);
    expect(ids).not.toContain(rejected.data.payload.key_id);
    expect(ids).not.toContain(canceled.data.payload.key_id);

    // An integrator's scopes are not governed: the key is made and works at once.
    const plain = await createKey(alice.key, { scopes: ['read', 'write'] });
    expect(plain.statusCode, plain.body).toBe(201);
    expect(plain.data).toMatchObject({ object: 'api_key', member: alice.id, scopes: ['read', 'write'] });
    expect((await api(t, 'GET', '/v1/wallets', { key: plain.data.key })).statusCode).toBe(200);
    expect((await api(t, 'GET', '/v1/changes?kind=api_key', { key: org.key })).data.data).toHaveLength(2);
  });

  it('through the console too: the key is shown once, with the approval it waits for', async () => {
    const { alice, bob, org } = await production();
    const client = await signedIn(t, org.name, alice.email);
    const page = await client.submit('/console/api-keys', '/console/api-keys', { scopes: ['read', 'admin'] });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain('id="key-pending"');
    const secret = /id="new-key">(sk_live_[^<]+)</.exec(page.body)?.[1] as string;
    expect(secret).toBeDefined();
    expect((await api(t, 'GET', '/v1/members', { key: secret })).statusCode).toBe(401);
    const pending = (await api(t, 'GET', '/v1/changes?kind=api_key&status=pending', { key: bob.key })).data
      .data;
    expect(pending).toHaveLength(1);
    expect(pending[0].proposed_by).toBe(alice.id);
    expect(await storedPayload(pending[0].id)).not.toContain(secret);
    expect((await vote(bob.key, pending[0].approval)).statusCode).toBe(200);
    expect((await api(t, 'GET', '/v1/members', { key: secret })).statusCode).toBe(200);
  });
});
