/**
 * Authorization policies through HTTP: versions (each change a new one, old decisions pointing at theirs),
 * rule validation naming the field, each matcher, deny with nothing written, and changes to the policy that
 * themselves need approval.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

describe.each(BACKENDS)('policies on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t.close();
  });

  const put = (org: TestOrganization, body: unknown, key = org.key) =>
    api(t, 'PUT', '/v1/policies', { key, body });
  const pay = (org: TestOrganization, source: string, amount: string, phone = '+254711000222') =>
    api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source, destination: mobileMoney(phone), amount, currency: 'KES' },
    });

  it('starts at version 1 allowing everything; each change is a new version; old versions stay readable', async () => {
    const org = await newOrganization(t);
    const initial = await api(t, 'GET', '/v1/policies', { key: org.key });
    expect(initial.data).toMatchObject({
      object: 'policy',
      version: 1,
      rules: [],
      default: { action: 'allow' },
    });
    const wallet = await fundedWallet(t, '100.00', 'KES', org.key);
    const before = await pay(org, wallet, '10.00');
    expect(before.data.authorization).toEqual({ decision: 'allow', policy_version: 1, rule: 'default' });

    const deny = {
      rules: [{ id: 'no_cards', applies_to: 'transfer', match: { rails: ['card'] }, action: 'deny' }],
    };
    const v2 = await put(org, deny);
    expect(v2.statusCode, v2.body).toBe(200);
    expect(v2.data).toMatchObject({ version: 2, created_by: expect.stringMatching(/^key_/) });
    expect(v2.data.rules[0]).toMatchObject({ id: 'no_cards', action: 'deny', match: { rails: ['card'] } });
    const conflict = await put(org, { ...deny, base_version: 1 });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.data).toMatchObject({ code: 'policy_version_conflict', param: 'base_version' });
    const v3 = await put(org, { ...deny, base_version: 2 });
    expect(v3.data.version).toBe(3);

    const versions = await api(t, 'GET', '/v1/policies/versions?limit=2', { key: org.key });
    expect(versions.data.data.map((p: { version: number }) => p.version)).toEqual([3, 2]);
    expect(versions.data).toMatchObject({ has_more: true, next_cursor: 2 });
    const older = await api(t, 'GET', '/v1/policies/versions?before_version=2', { key: org.key });
    expect(older.data.data.map((p: { version: number }) => p.version)).toEqual([1]);
    expect((await api(t, 'GET', '/v1/policies/versions/1', { key: org.key })).data.rules).toEqual([]);
    expect((await api(t, 'GET', '/v1/policies/versions/9', { key: org.key })).statusCode).toBe(404);
    // The transfer decided under version 1 still names it.
    const again = await api(t, 'GET', `/v1/transfers/${before.data.id}`, { key: org.key });
    expect(again.data.authorization.policy_version).toBe(1);
    const events = await api(t, 'GET', '/v1/events?type=policy.updated', { key: org.key });
    expect(events.data.data.map((e: { data: { version: number } }) => e.data.version)).toEqual([3, 2]);
  });

  it('changing the policy is for admins: an integrator key is refused', async () => {
    const org = await newOrganization(t);
    const initiator = await org.member(['initiator']);
    const refused = await put(org, { rules: [] }, initiator.key);
    expect(refused.statusCode).toBe(403);
    expect((await api(t, 'GET', '/v1/policies', { key: initiator.key })).statusCode).toBe(200);
    expect((await api(t, 'PUT', '/v1/policies', { key: t.key, body: { rules: [] } })).statusCode).toBe(403);
  });

  it('refuses a malformed rule naming the field at fault', async () => {
    const org = await newOrganization(t);
    const cases: [unknown, string][] = [
      [{ rules: [{ id: 'a', action: 'require_approval' }] }, 'rules.0.approval'],
      [
        { rules: [{ id: 'a', action: 'require_approval', approval: { quorum: 0, roles: ['approver'] } }] },
        'rules.0.approval.quorum',
      ],
      [
        { rules: [{ id: 'a', action: 'require_approval', approval: { quorum: 1, roles: ['boss'] } }] },
        'rules.0.approval.roles.0',
      ],
      [
        {
          rules: [
            { id: 'a', action: 'allow', match: { amount: [{ currency: 'KES', gte: '5.00', lt: '1.00' }] } },
          ],
        },
        'rules.0.match.amount.0.lt',
      ],
      [
        { rules: [{ id: 'a', action: 'allow', match: { amount: [{ currency: 'KES', gte: '1.001' }] } }] },
        'rules.0.match.amount.0.gte',
      ],
      [
        { rules: [{ id: 'a', action: 'allow', match: { aggregate: { window_seconds: 60 } } }] },
        'rules.0.match.aggregate',
      ],
      [
        {
          rules: [
            { id: 'a', action: 'allow' },
            { id: 'a', action: 'deny' },
          ],
        },
        'rules.1.id',
      ],
      [{ rules: [{ id: 'default', action: 'allow' }] }, 'rules.0.id'],
      [
        { rules: [{ id: 'p', applies_to: 'policy.update', match: { rails: ['card'] }, action: 'deny' }] },
        'rules.0.match',
      ],
      [
        {
          rules: [
            {
              id: 'a',
              action: 'require_approval',
              approval: { quorum: 1, roles: ['approver', 'admin'], distinct_roles: true },
            },
          ],
        },
        'rules.0.approval.distinct_roles',
      ],
    ];
    for (const [body, param] of cases) {
      const response = await put(org, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.data.param, JSON.stringify(body)).toBe(param);
    }
    expect((await api(t, 'GET', '/v1/policies', { key: org.key })).data.version).toBe(1);
  });

  it('deny refuses with 422 policy_denied naming the rule, and writes nothing but the evidence', async () => {
    const org = await newOrganization(t);
    await put(org, {
      rules: [{ id: 'cap', match: { amount: [{ currency: 'KES', gte: '500.00' }] }, action: 'deny' }],
    });
    const wallet = await fundedWallet(t, '1000.00', 'KES', org.key);
    const denied = await pay(org, wallet, '500.00');
    expect(denied.statusCode).toBe(422);
    expect(denied.data).toMatchObject({
      code: 'policy_denied',
      rule: 'cap',
      policy_version: '2',
      param: 'amount',
    });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '1000.00', pending: '0.00' });
    // Under the cap passes (M-Pesa carries whole shillings, so the next amount down is 499.00).
    expect((await pay(org, wallet, '499.00')).statusCode).toBe(201);
    const evidence = await api(t, 'GET', `/v1/wallets/${wallet}/evidence`, { key: org.key });
    const decisions = evidence.data.data.filter((r: { kind: string }) => r.kind === 'transfer.decision');
    expect(
      decisions.map((r: { data: { authorization: { decision: string } } }) => r.data.authorization.decision),
    ).toEqual(['allow', 'deny']);
    await expectLedgerHealthy(t);
  });

  it('matches rails and destination types, new and known counterparties, and windowed counts', async () => {
    const org = await newOrganization(t);
    await put(org, {
      rules: [
        { id: 'banks', match: { destination_types: ['bank_account'] }, action: 'deny' },
        { id: 'third', match: { aggregate: { window_seconds: 3600, count_at_least: 3 } }, action: 'deny' },
        { id: 'new_payee', match: { counterparty: 'new', rails: ['mobile_money'] }, action: 'allow' },
        { id: 'known_payee', match: { counterparty: 'known' }, action: 'allow' },
      ],
    });
    const wallet = await fundedWallet(t, '1000.00', 'KES', org.key);
    const bank = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: {
        source: wallet,
        destination: { type: 'bank_account', bank_code: '01', account_number: '12345678' },
        amount: '200.00',
        currency: 'KES',
      },
    });
    expect(bank.data).toMatchObject({ code: 'policy_denied', rule: 'banks' });
    const first = await pay(org, wallet, '10.00', '+254711000301');
    expect(first.data.authorization.rule).toBe('new_payee');
    const second = await pay(org, wallet, '10.00', '+254711000301');
    expect(second.data.authorization.rule).toBe('known_payee');
    const third = await pay(org, wallet, '10.00', '+254711000302');
    expect(third.data).toMatchObject({ code: 'policy_denied', rule: 'third' });
  });

  it('matches the paying customer’s KYC status and risk level, and a windowed sum', async () => {
    const org = await newOrganization(t);
    await put(org, {
      rules: [
        { id: 'risky', match: { risk_levels: ['high'] }, action: 'deny' },
        {
          id: 'unverified_big',
          match: {
            kyc_statuses: ['unverified'],
            aggregate: { window_seconds: 86400, sum_at_least: '300.00', currency: 'KES' },
          },
          action: 'deny',
        },
      ],
    });
    const wallet = await fundedWallet(t, '1000.00', 'KES', org.key);
    expect((await pay(org, wallet, '200.00')).statusCode).toBe(201);
    const over = await pay(org, wallet, '100.00');
    expect(over.data).toMatchObject({ code: 'policy_denied', rule: 'unverified_big' });
    const customer = (await api(t, 'GET', `/v1/wallets/${wallet}`, { key: org.key })).data.owner;
    const risk = await api(t, 'POST', `/v1/customers/${customer}/risk`, {
      key: org.key,
      body: { risk_level: 'high', reason: 'adverse media' },
    });
    expect(risk.statusCode, risk.body).toBe(200);
    const risky = await pay(org, wallet, '1.00');
    expect(risky.data).toMatchObject({ code: 'policy_denied', rule: 'risky' });
    const other = await createCustomer(t, org.key);
    expect(other).toMatch(/^cus_/);
  });

  it('a policy that requires approval for changes: the change waits, its proposer cannot approve it, another admin applies it', async () => {
    const org = await newOrganization(t);
    const alice = await org.member(['admin']);
    const bob = await org.member(['admin']);
    const guarded = {
      rules: [
        {
          id: 'four_eyes',
          applies_to: 'policy.update',
          action: 'require_approval',
          approval: { quorum: 1, roles: ['admin'] },
        },
        { id: 'cap', match: { amount: [{ currency: 'KES', gte: '100.00' }] }, action: 'deny' },
      ],
    };
    expect((await put(org, guarded, alice.key)).data.version).toBe(2);
    const lifted = { rules: [guarded.rules[0]] };
    const proposed = await put(org, lifted, alice.key);
    expect(proposed.statusCode, proposed.body).toBe(202);
    expect(proposed.data).toMatchObject({
      object: 'policy_change',
      status: 'pending_approval',
      base_version: 2,
      applied_version: null,
      created_by: alice.id,
    });
    // Still the old version until someone else approves.
    expect((await api(t, 'GET', '/v1/policies', { key: org.key })).data.version).toBe(2);
    const self = await api(t, 'POST', `/v1/approvals/${proposed.data.approval}/approve`, {
      key: alice.key,
      body: {},
    });
    expect(self.data.code).toBe('self_approval_forbidden');
    const approved = await api(t, 'POST', `/v1/approvals/${proposed.data.approval}/approve`, {
      key: bob.key,
      body: { comment: 'agreed in the risk committee' },
    });
    expect(approved.statusCode, approved.body).toBe(200);
    const current = (await api(t, 'GET', '/v1/policies', { key: org.key })).data;
    expect(current).toMatchObject({ version: 3, approval: proposed.data.approval, created_by: alice.id });
    expect(current.rules.map((r: { id: string }) => r.id)).toEqual(['four_eyes']);
    const change = await api(t, 'GET', `/v1/policy-changes/${proposed.data.id}`, { key: org.key });
    expect(change.data).toMatchObject({ status: 'applied', applied_version: 3 });

    // A change approved after the policy moved on is superseded, not applied over the newer version.
    const stale = await put(org, { rules: [guarded.rules[0]] }, alice.key);
    const newer = await put(org, { rules: [guarded.rules[0]] }, bob.key);
    await api(t, 'POST', `/v1/approvals/${newer.data.approval}/approve`, { key: alice.key, body: {} });
    await api(t, 'POST', `/v1/approvals/${stale.data.approval}/approve`, { key: bob.key, body: {} });
    expect((await api(t, 'GET', `/v1/policy-changes/${stale.data.id}`, { key: org.key })).data.status).toBe(
      'superseded',
    );
    expect((await api(t, 'GET', '/v1/policies', { key: org.key })).data.version).toBe(4);
  });
});
