/**
 * Policies and approvals through HTTP: a rule that requires approval holds a transfer `pending_approval`
 * with its funds held; members vote once each with a role the rule names, never the initiator; the quorum
 * sends it on, one rejection rejects it, expiry expires it, a cancel cancels the approval; every change is
 * an `approval.updated` event; the ledger stays exact throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireDueApprovals } from '../src/modules/authorization/useCases/approvals.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const approvalRule = (quorum: number, roles: string[], extra: Record<string, unknown> = {}) => ({
  id: 'large_payouts',
  description: 'Payouts of 1,000.00 KES or more need a second pair of eyes',
  match: { amount: [{ currency: 'KES', gte: '1000.00' }] },
  action: 'require_approval',
  approval: { quorum, roles, ...extra },
});

describe.each(BACKENDS)('approvals on %s', (backend) => {
  let t: TestApp;
  const realNow = t0();
  function t0() {
    return () => new Date();
  }

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  async function setup(rule: Record<string, unknown>) {
    const org = await newOrganization(t);
    const put = await api(t, 'PUT', '/v1/policies', { key: org.key, body: { rules: [rule] } });
    expect(put.statusCode, put.body).toBe(200);
    const initiator = await org.member(['initiator']);
    const wallet = await fundedWallet(t, '50000.00', 'KES', org.key);
    return { org, initiator, wallet, version: put.data.version as number };
  }

  const pay = (org: { key: string }, source: string, amount: string, phone = '+254711000111') =>
    api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source, destination: mobileMoney(phone), amount, currency: 'KES' },
    });

  async function eventsOf(org: TestOrganization, type: string) {
    return (await api(t, 'GET', `/v1/events?type=${type}&limit=100`, { key: org.key })).data.data;
  }

  it('holds a transfer the policy names pending_approval, funds held, and records who and what decided', async () => {
    const { org, initiator, wallet, version } = await setup(approvalRule(1, ['approver']));
    const small = await pay(initiator, wallet, '999.00');
    expect(small.statusCode, small.body).toBe(201);
    expect(small.data).toMatchObject({
      status: 'pending',
      created_by: initiator.id,
      authorization: { decision: 'allow', policy_version: version, rule: 'default' },
      approval: null,
    });
    const large = await pay(initiator, wallet, '1000.00');
    expect(large.statusCode, large.body).toBe(201);
    expect(large.data).toMatchObject({
      status: 'pending_approval',
      status_reason: 'awaiting_approval',
      ledger_state: 'pending',
      authorization: { decision: 'require_approval', policy_version: version, rule: 'large_payouts' },
    });
    expect(large.data.approval).toMatch(/^apr_/);
    const balance = await balanceOf(t, wallet, org.key);
    expect(balance).toMatchObject({ available: '48001.00', pending: '1999.00' });
    // The rail never sees it while it waits.
    await drainRails(t);
    expect((await api(t, 'GET', `/v1/transfers/${large.data.id}`, { key: org.key })).data.status).toBe(
      'pending_approval',
    );
    const approval = await api(t, 'GET', `/v1/approvals/${large.data.approval}`, { key: org.key });
    expect(approval.data).toMatchObject({
      object: 'approval',
      status: 'pending',
      resource: { type: 'transfer', id: large.data.id },
      policy_version: version,
      rule: 'large_payouts',
      quorum: { required: 1, roles: ['approver'], distinct_roles: false },
      votes: [],
      initiated_by: initiator.id,
      decided_at: null,
    });
    const events = await eventsOf(org, 'approval.updated');
    expect(events.map((e: { data: { approval_id: string } }) => e.data.approval_id)).toContain(
      large.data.approval,
    );
    const evidence = await api(t, 'GET', `/v1/transfers/${large.data.id}/evidence`, { key: org.key });
    expect(evidence.data.data[0].data).toMatchObject({
      authorization: { decision: 'require_approval', policy_version: version, rule: 'large_payouts' },
      created_by: initiator.id,
    });
    await expectLedgerHealthy(t);
  });

  it('the initiator cannot approve, a member needs a named role, a member counts once; the quorum sends it on', async () => {
    const { org, initiator, wallet } = await setup(approvalRule(2, ['approver', 'admin']));
    const transfer = (await pay(initiator, wallet, '5000.00')).data;
    const id = transfer.approval;
    const initiatorVote = await api(t, 'POST', `/v1/approvals/${id}/approve`, {
      key: initiator.key,
      body: {},
    });
    expect(initiatorVote.statusCode).toBe(403);
    expect(initiatorVote.data.code).toBe('self_approval_forbidden');
    const viewer = await org.member(['viewer']);
    const viewerVote = await api(t, 'POST', `/v1/approvals/${id}/approve`, { key: viewer.key, body: {} });
    expect(viewerVote.statusCode).toBe(403);
    expect(viewerVote.data.code).toBe('approval_role_required');
    const keyVote = await api(t, 'POST', `/v1/approvals/${id}/approve`, { key: org.key, body: {} });
    expect(keyVote.statusCode).toBe(403);
    expect(keyVote.data.code).toBe('member_required');

    const first = await org.member(['approver']);
    const one = await api(t, 'POST', `/v1/approvals/${id}/approve`, {
      key: first.key,
      body: { comment: 'checked the invoice' },
    });
    expect(one.statusCode, one.body).toBe(200);
    expect(one.data).toMatchObject({
      status: 'pending',
      votes: [
        {
          member: first.id,
          email: first.email,
          role: 'approver',
          decision: 'approve',
          comment: 'checked the invoice',
        },
      ],
    });
    const again = await api(t, 'POST', `/v1/approvals/${id}/approve`, { key: first.key, body: {} });
    expect(again.statusCode).toBe(409);
    expect(again.data.code).toBe('already_voted');
    const canAct = await api(t, 'GET', '/v1/approvals?can_act=true', { key: first.key });
    expect(canAct.data.data).toEqual([]);

    const second = await org.member(['admin']);
    const queue = await api(t, 'GET', '/v1/approvals?can_act=true&status=pending', { key: second.key });
    expect(queue.data.data.map((a: { id: string }) => a.id)).toEqual([id]);
    const two = await api(t, 'POST', `/v1/approvals/${id}/approve`, { key: second.key, body: {} });
    expect(two.statusCode, two.body).toBe(200);
    expect(two.data.status).toBe('approved');
    expect(two.data.decided_at).not.toBeNull();
    const moved = (await api(t, 'GET', `/v1/transfers/${transfer.id}`, { key: org.key })).data;
    expect(moved).toMatchObject({ status: 'pending', approval: id });
    await drainRails(t);
    expect((await api(t, 'GET', `/v1/transfers/${transfer.id}`, { key: org.key })).data.status).toBe(
      'settled',
    );
    const late = await api(t, 'POST', `/v1/approvals/${id}/reject`, {
      key: (await org.member(['approver'])).key,
      body: {},
    });
    expect(late.statusCode).toBe(409);
    expect(late.data.code).toBe('invalid_state_transition');
    const updates = (await eventsOf(org, 'approval.updated')).filter(
      (e: { data: { approval_id: string } }) => e.data.approval_id === id,
    );
    expect(updates.map((e: { data: { status: string } }) => e.data.status).sort()).toEqual([
      'approved',
      'pending',
      'pending',
    ]);
    await expectLedgerHealthy(t);
  });

  it('distinct roles: two approvers of one role do not make the quorum; a vote from the other role does', async () => {
    const { org, initiator, wallet } = await setup(
      approvalRule(2, ['approver', 'compliance'], { distinct_roles: true }),
    );
    const transfer = (await pay(initiator, wallet, '2000.00')).data;
    for (const _ of [1, 2]) {
      const vote = await api(t, 'POST', `/v1/approvals/${transfer.approval}/approve`, {
        key: (await org.member(['approver'])).key,
        body: {},
      });
      expect(vote.data.status).toBe('pending');
    }
    const officer = await org.member(['compliance']);
    const last = await api(t, 'POST', `/v1/approvals/${transfer.approval}/approve`, {
      key: officer.key,
      body: {},
    });
    expect(last.data.status).toBe('approved');
    expect(last.data.votes.map((v: { role: string }) => v.role)).toEqual([
      'approver',
      'approver',
      'compliance',
    ]);
  });

  it('one rejection rejects the transfer and gives its hold back', async () => {
    const { org, initiator, wallet } = await setup(approvalRule(2, ['approver']));
    const transfer = (await pay(initiator, wallet, '3000.00')).data;
    const approver = await org.member(['approver']);
    const rejected = await api(t, 'POST', `/v1/approvals/${transfer.approval}/reject`, {
      key: approver.key,
      body: { comment: 'unknown beneficiary' },
    });
    expect(rejected.data).toMatchObject({ status: 'rejected' });
    const after = (await api(t, 'GET', `/v1/transfers/${transfer.id}`, { key: org.key })).data;
    expect(after).toMatchObject({
      status: 'rejected',
      failure_code: 'approval_rejected',
      ledger_state: 'voided',
    });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '50000.00', pending: '0.00' });
    const events = await eventsOf(org, 'transfer.rejected');
    expect(events.map((e: { data: { transfer_id: string } }) => e.data.transfer_id)).toContain(transfer.id);
    await expectLedgerHealthy(t);
  });

  it('expiry expires the approval and the transfer, releasing the hold; a vote after the time is refused', async () => {
    const { org, initiator, wallet } = await setup(approvalRule(1, ['approver'], { expires_in_seconds: 60 }));
    const transfer = (await pay(initiator, wallet, '4000.00')).data;
    const approval = (await api(t, 'GET', `/v1/approvals/${transfer.approval}`, { key: org.key })).data;
    const expiresAt = Date.parse(approval.expires_at);
    expect(expiresAt - Date.parse(approval.created_at)).toBe(60_000);
    t.deps.now = () => new Date(expiresAt + 1);
    try {
      const late = await api(t, 'POST', `/v1/approvals/${transfer.approval}/approve`, {
        key: (await org.member(['approver'])).key,
        body: {},
      });
      expect(late.statusCode).toBe(409);
      expect(late.data.detail).toContain('expired');
      expect(await expireDueApprovals(t.deps)).toBeGreaterThanOrEqual(1);
      expect(await expireDueApprovals(t.deps)).toBe(0);
    } finally {
      t.deps.now = realNow;
    }
    expect((await api(t, 'GET', `/v1/approvals/${transfer.approval}`, { key: org.key })).data.status).toBe(
      'expired',
    );
    const after = (await api(t, 'GET', `/v1/transfers/${transfer.id}`, { key: org.key })).data;
    expect(after).toMatchObject({
      status: 'expired',
      failure_code: 'approval_expired',
      ledger_state: 'voided',
    });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '50000.00', pending: '0.00' });
    const events = await eventsOf(org, 'transfer.expired');
    expect(events.map((e: { data: { transfer_id: string } }) => e.data.transfer_id)).toContain(transfer.id);
    await expectLedgerHealthy(t);
  });

  it('canceling the transfer cancels its approval', async () => {
    const { org, initiator, wallet } = await setup(approvalRule(1, ['approver']));
    const transfer = (await pay(initiator, wallet, '4000.00')).data;
    const canceled = await api(t, 'POST', `/v1/transfers/${transfer.id}/cancel`, { key: initiator.key });
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(canceled.data.status).toBe('canceled');
    expect((await api(t, 'GET', `/v1/approvals/${transfer.approval}`, { key: org.key })).data.status).toBe(
      'canceled',
    );
    const list = await api(t, 'GET', `/v1/approvals?resource=${transfer.id}`, { key: org.key });
    expect(list.data.data).toHaveLength(1);
    await expectLedgerHealthy(t);
  });

  it('an internal transfer that needs approval settles when approved', async () => {
    const org = await newOrganization(t);
    await api(t, 'PUT', '/v1/policies', {
      key: org.key,
      body: {
        rules: [],
        default: { action: 'require_approval', approval: { quorum: 1, roles: ['approver'] } },
      },
    });
    const from = await fundedWallet(t, '100.00', 'KES', org.key);
    const to = await fundedWallet(t, '0', 'KES', org.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source: from, destination: to, amount: '40.00', currency: 'KES' },
    });
    expect(created.data).toMatchObject({ status: 'pending_approval', authorization: { rule: 'default' } });
    const approver = await org.member(['approver']);
    await api(t, 'POST', `/v1/approvals/${created.data.approval}/approve`, { key: approver.key, body: {} });
    expect((await api(t, 'GET', `/v1/transfers/${created.data.id}`, { key: org.key })).data.status).toBe(
      'settled',
    );
    expect((await balanceOf(t, to, org.key)).available).toBe('40.00');
    await expectLedgerHealthy(t);
  });

  it('a transfer held for review that also needs approval waits for the approval once the review clears', async () => {
    const { org, initiator, wallet } = await setup(approvalRule(1, ['approver']));
    const held = await api(t, 'POST', '/v1/transfers', {
      key: initiator.key,
      body: {
        source: wallet,
        destination: { ...mobileMoney('+254711000555'), name: 'Viktor Dragomirov' },
        amount: '2500.00',
        currency: 'KES',
      },
    });
    expect(held.data).toMatchObject({
      status: 'in_review',
      approval: null,
      authorization: { decision: 'require_approval', rule: 'large_payouts' },
    });
    const reviews = await api(t, 'GET', `/v1/reviews?transfer=${held.data.id}`, { key: org.key });
    const officer = await org.member(['compliance']);
    const cleared = await api(t, 'POST', `/v1/reviews/${reviews.data.data[0].id}/clear`, {
      key: officer.key,
      body: { note: 'a different person' },
    });
    expect(cleared.statusCode, cleared.body).toBe(200);
    const waiting = (await api(t, 'GET', `/v1/transfers/${held.data.id}`, { key: org.key })).data;
    expect(waiting).toMatchObject({ status: 'pending_approval', status_reason: 'awaiting_approval' });
    expect(waiting.approval).toMatch(/^apr_/);
    const approver = await org.member(['approver']);
    const approved = await api(t, 'POST', `/v1/approvals/${waiting.approval}/approve`, {
      key: approver.key,
      body: {},
    });
    expect(approved.data.status).toBe('approved');
    expect((await api(t, 'GET', `/v1/transfers/${held.data.id}`, { key: org.key })).data.status).toBe(
      'pending',
    );
    await expectLedgerHealthy(t);
  });

  it('two approvers voting at the same moment on a quorum of one: one decides, the other is refused', async () => {
    const { org, initiator, wallet } = await setup(approvalRule(1, ['approver']));
    const transfer = (await pay(initiator, wallet, '1500.00')).data;
    const voters = [await org.member(['approver']), await org.member(['approver'])];
    const votes = await Promise.all(
      voters.map((v) =>
        api(t, 'POST', `/v1/approvals/${transfer.approval}/approve`, { key: v.key, body: {} }),
      ),
    );
    expect(votes.map((v) => v.statusCode).sort()).toEqual([200, 409]);
    const approval = (await api(t, 'GET', `/v1/approvals/${transfer.approval}`, { key: org.key })).data;
    expect(approval).toMatchObject({ status: 'approved' });
    expect(approval.votes).toHaveLength(1);
    const decided = (await eventsOf(org, 'approval.updated')).filter(
      (e: { data: { approval_id: string; status: string } }) =>
        e.data.approval_id === transfer.approval && e.data.status === 'approved',
    );
    expect(decided).toHaveLength(1);
    expect((await api(t, 'GET', `/v1/transfers/${transfer.id}`, { key: org.key })).data.status).toBe(
      'pending',
    );
    await expectLedgerHealthy(t);
  });

  it('a cancel racing the last vote: the approval is decided one way, the hold released or kept once', async () => {
    for (let round = 0; round < 4; round++) {
      const { org, initiator, wallet } = await setup(approvalRule(1, ['approver']));
      const transfer = (await pay(initiator, wallet, '1200.00')).data;
      const approver = await org.member(['approver']);
      const [cancel, vote] = await Promise.all([
        api(t, 'POST', `/v1/transfers/${transfer.id}/cancel`, { key: initiator.key }),
        api(t, 'POST', `/v1/approvals/${transfer.approval}/approve`, { key: approver.key, body: {} }),
      ]);
      const approval = (await api(t, 'GET', `/v1/approvals/${transfer.approval}`, { key: org.key })).data;
      const after = (await api(t, 'GET', `/v1/transfers/${transfer.id}`, { key: org.key })).data;
      if (approval.status === 'canceled') {
        expect(vote.statusCode).toBe(409);
        expect(after.status).toBe('canceled');
      } else {
        expect(approval.status).toBe('approved');
        expect(vote.statusCode).toBe(200);
        // Approved first, then canceled before the rail took it: a legitimate order.
        expect(cancel.statusCode).toBe(200);
        expect(after.status).toBe('canceled');
      }
      expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '50000.00', pending: '0.00' });
    }
    await expectLedgerHealthy(t);
  });

  it('a vote racing the expiry worker at the expiry instant resolves one way only', async () => {
    const { org, initiator, wallet } = await setup(approvalRule(1, ['approver'], { expires_in_seconds: 60 }));
    const transfer = (await pay(initiator, wallet, '1300.00')).data;
    const approver = await org.member(['approver']);
    const approval = (await api(t, 'GET', `/v1/approvals/${transfer.approval}`, { key: org.key })).data;
    t.deps.now = () => new Date(Date.parse(approval.expires_at));
    try {
      const [vote, expired] = await Promise.all([
        api(t, 'POST', `/v1/approvals/${transfer.approval}/approve`, { key: approver.key, body: {} }),
        expireDueApprovals(t.deps),
      ]);
      const final = (await api(t, 'GET', `/v1/approvals/${transfer.approval}`, { key: org.key })).data;
      expect(final.status).toBe('expired');
      expect(vote.statusCode).toBe(409);
      expect(expired).toBe(1);
    } finally {
      t.deps.now = realNow;
    }
    expect((await balanceOf(t, wallet, org.key)).pending).toBe('0.00');
    await expectLedgerHealthy(t);
  });
});
