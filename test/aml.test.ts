/**
 * AML monitoring through HTTP: rules as data per organization (defaults, changes as new versions with
 * evidence), evaluated by the ledger writer on every transfer: alerts (one open per wallet and rule),
 * review holds, blocks that write nothing but evidence; alerts resolved once; a velocity block that two
 * racing transfers cannot both slip under; the ledger and the evidence chain intact after.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy } from './support/ledger.ts';
import { memberKeyIn } from './support/organizations.ts';

const RACERS = 6;
const RACE_COUNT_MAX = 3;

describe.each(BACKENDS)('AML monitoring on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await t.close();
  });

  /** A fresh organization (its own rules), with an integrator key and an operator key. */
  async function organization() {
    const name = `AML ${randomBytes(4).toString('hex')}`;
    const key = (await issueApiKey(t.deps, { organizationName: name })).key;
    // Reviews and freezes are a person's decisions: the operator is a compliance member's own key.
    const operator = (await memberKeyIn(t, name, ['compliance'])).key;
    const wallet = async (fund = '0') => {
      const customer = await api(t, 'POST', '/v1/customers', {
        key,
        body: { type: 'individual', name: 'A' },
      });
      const created = await api(t, 'POST', '/v1/wallets', {
        key,
        body: { owner: customer.data.id, currency: 'KES' },
      });
      if (fund !== '0') {
        const funded = await api(t, 'POST', `/v1/sandbox/wallets/${created.data.id}/fund`, {
          key,
          body: { amount: fund },
        });
        expect(funded.statusCode, funded.body).toBe(201);
      }
      return created.data.id as string;
    };
    const rules = async () => (await api(t, 'GET', '/v1/aml/rules', { key: operator })).data.data as any[];
    const ruleOf = async (type: string) =>
      (await rules()).find((r) => r.type === type && r.parameters.currency === 'KES');
    const change = (id: string, body: unknown) =>
      api(t, 'PATCH', `/v1/aml/rules/${id}`, { key: operator, body });
    const pay = (
      source: string,
      amount: string,
      destination: unknown = { type: 'mobile_money', network: 'mpesa', phone: '+254711000111' },
    ) => api(t, 'POST', '/v1/transfers', { key, body: { source, destination, amount, currency: 'KES' } });
    const alerts = async (query = '') =>
      (await api(t, 'GET', `/v1/aml/alerts${query}`, { key: operator })).data.data as any[];
    return { name, key, operator, wallet, rules, ruleOf, change, pay, alerts };
  }

  it('starts every organization with the default rules, for operators only', async () => {
    const o = await organization();
    const rules = await o.rules();
    expect(rules).toHaveLength(20);
    expect(rules.every((r) => r.action === 'alert' && r.enabled && r.version === 1)).toBe(true);
    expect(
      rules.find((r) => r.type === 'single_transfer_threshold' && r.parameters.currency === 'KES')
        ?.parameters,
    ).toEqual({
      currency: 'KES',
      amount: '1000000.00',
    });
    expect((await api(t, 'GET', '/v1/aml/rules', { key: o.key })).statusCode).toBe(403);
    expect((await api(t, 'GET', '/v1/aml/alerts', { key: o.key })).statusCode).toBe(403);
    // The defaults are written once, with their evidence.
    expect(await o.rules()).toEqual(rules);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=aml.rules.update', { key: o.operator });
    expect(evidence.data.data).toHaveLength(1);
    expect(evidence.data.data[0].data.change).toBe('defaults');
  });

  it('creates and changes rules as new versions, checking parameters by type, with evidence of before and after', async () => {
    const o = await organization();
    const rule = await o.ruleOf('velocity');
    const changed = await o.change(rule.id, {
      parameters: { currency: 'KES', window_seconds: 600, count_max: 5 },
      action: 'review',
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.data).toMatchObject({
      version: 2,
      action: 'review',
      parameters: { window_seconds: 600, count_max: 5, amount_max: null },
    });
    const bad = await o.change(rule.id, {
      parameters: { currency: 'KES', window_seconds: 600, count_max: 0 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.data.param).toBe('parameters.count_max');
    const unknown = await o.change(rule.id, {
      parameters: { currency: 'KES', window_seconds: 60, count_max: 1, amount: '5' },
    });
    expect(unknown.data.param).toBe('parameters.amount');
    const created = await api(t, 'POST', '/v1/aml/rules', {
      key: o.operator,
      body: {
        name: 'Big payouts',
        type: 'single_transfer_threshold',
        parameters: { currency: 'KES', amount: '250.00' },
        action: 'block',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.data).toMatchObject({
      object: 'aml_rule',
      version: 1,
      enabled: true,
      parameters: { amount: '250.00' },
    });
    expect((await api(t, 'GET', `/v1/aml/rules/${created.data.id}`, { key: o.operator })).data).toEqual(
      created.data,
    );
    const updates = (await api(t, 'GET', '/v1/evidence?kind=aml.rules.update', { key: o.operator })).data
      .data;
    expect(updates.map((r: any) => r.data.change)).toEqual(['create', 'update', 'defaults']);
    expect(updates[1].data.before.version).toBe(1);
    expect(updates[1].data.after.version).toBe(2);
  });

  it('a block refuses the transfer and writes nothing but the evidence', async () => {
    const o = await organization();
    const wallet = await o.wallet('1000.00');
    const rule = await o.ruleOf('single_transfer_threshold');
    await o.change(rule.id, { parameters: { currency: 'KES', amount: '500.00' }, action: 'block' });
    const blocked = await o.pay(wallet, '500.00');
    expect(blocked.statusCode).toBe(422);
    expect(blocked.data).toMatchObject({ code: 'compliance_blocked', param: 'amount' });
    expect(blocked.body).toContain(rule.name);
    expect(await balanceOf(t, wallet, o.key)).toMatchObject({ available: '1000.00', pending: '0.00' });
    expect((await api(t, 'GET', `/v1/transfers?wallet=${wallet}`, { key: o.key })).data.data).toHaveLength(1);
    expect(await o.alerts()).toEqual([]);
    const evidence = await api(t, 'GET', `/v1/wallets/${wallet}/evidence`, { key: o.operator });
    const decision = evidence.data.data.find((r: any) => r.kind === 'transfer.decision');
    expect(decision).toMatchObject({ transfer_id: null, data: { outcome: 'block', amount: '500.00' } });
    expect(decision.data.aml.hits[0]).toMatchObject({ rule_id: rule.id, rule_version: 2, action: 'block' });
    // Under the threshold passes (M-Pesa carries whole shillings, so the next amount down is 499.00).
    expect((await o.pay(wallet, '499.00')).statusCode).toBe(201);
  });

  it('a review holds the transfer with an AML case and an alert; an internal one credits nothing until cleared', async () => {
    const o = await organization();
    const wallet = await o.wallet('1000.00');
    const other = await o.wallet();
    const rule = await o.ruleOf('single_transfer_threshold');
    await o.change(rule.id, { parameters: { currency: 'KES', amount: '300.00' }, action: 'review' });
    const held = await o.pay(wallet, '300.00', other);
    expect(held.statusCode, held.body).toBe(201);
    expect(held.data).toMatchObject({ status: 'in_review', ledger_state: 'pending' });
    expect(await balanceOf(t, wallet, o.key)).toMatchObject({ available: '700.00', pending: '300.00' });
    expect(await balanceOf(t, other, o.key)).toMatchObject({ available: '0.00', current: '0.00' });
    const [alert] = await o.alerts(`?transfer=${held.data.id}`);
    expect(alert).toMatchObject({ action: 'review', status: 'open', rule: rule.id, rule_version: 2, wallet });
    const cases = await api(t, 'GET', `/v1/reviews?transfer=${held.data.id}`, { key: o.operator });
    const [reviewCase] = cases.data.data;
    expect(reviewCase).toMatchObject({ kind: 'aml', status: 'open' });
    expect(reviewCase.findings.aml_hits[0]).toMatchObject({ rule_id: rule.id, action: 'review' });
    const cleared = await api(t, 'POST', `/v1/reviews/${reviewCase.id}/clear`, { key: o.operator, body: {} });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect((await api(t, 'GET', `/v1/transfers/${held.data.id}`, { key: o.key })).data.status).toBe(
      'settled',
    );
    expect(await balanceOf(t, other, o.key)).toMatchObject({ available: '300.00' });
    expect(await balanceOf(t, wallet, o.key)).toMatchObject({
      available: '700.00',
      pending: '0.00',
      current: '700.00',
    });
  });

  it('alerts: one open per wallet and rule, resolved once with a disposition, events both ways', async () => {
    const o = await organization();
    const wallet = await o.wallet('1000.00');
    const rule = await o.ruleOf('velocity');
    await o.change(rule.id, { parameters: { currency: 'KES', window_seconds: 3_600, count_max: 2 } });
    for (let i = 0; i < 4; i++) expect((await o.pay(wallet, '1.00')).statusCode).toBe(201);
    const open = await o.alerts('?status=open');
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({
      rule_type: 'velocity',
      action: 'alert',
      observed: { count: 3, count_max: 2 },
    });
    const ordinary = await api(t, 'POST', `/v1/aml/alerts/${open[0].id}/resolve`, {
      key: o.key,
      body: { disposition: 'false_positive' },
    });
    expect(ordinary.statusCode).toBe(403);
    // A server key with the compliance scope (no member) reads alerts but never resolves one.
    const server = (await issueApiKey(t.deps, { organizationName: o.name, scopes: ['compliance'] })).key;
    expect((await api(t, 'GET', `/v1/aml/alerts/${open[0].id}`, { key: server })).statusCode).toBe(200);
    const byServer = await api(t, 'POST', `/v1/aml/alerts/${open[0].id}/resolve`, {
      key: server,
      body: { disposition: 'false_positive' },
    });
    expect(byServer.statusCode, byServer.body).toBe(403);
    expect(byServer.data.code).toBe('member_required');
    const bad = await api(t, 'POST', `/v1/aml/alerts/${open[0].id}/resolve`, {
      key: o.operator,
      body: { disposition: 'ignored' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.data.param).toBe('disposition');
    const [first, second] = await Promise.all(
      ['false_positive', 'reported'].map((disposition) =>
        api(t, 'POST', `/v1/aml/alerts/${open[0].id}/resolve`, {
          key: o.operator,
          body: { disposition, note: 'checked' },
        }),
      ),
    );
    expect([first?.statusCode, second?.statusCode].sort()).toEqual([200, 409]);
    const resolved = (await api(t, 'GET', `/v1/aml/alerts/${open[0].id}`, { key: o.operator })).data;
    expect(resolved).toMatchObject({
      status: 'resolved',
      note: 'checked',
      resolved_by: expect.stringMatching(/^key_/),
    });
    // The next transfer over the limit opens a new alert.
    expect((await o.pay(wallet, '1.00')).statusCode).toBe(201);
    expect(await o.alerts('?status=open')).toHaveLength(1);
    const types = (await api(t, 'GET', '/v1/events?limit=100', { key: o.key })).data.data.map(
      (e: any) => e.type,
    );
    expect(types.filter((x: string) => x === 'aml.alert.opened')).toHaveLength(2);
    expect(types.filter((x: string) => x === 'aml.alert.resolved')).toHaveLength(1);
    const disposition = await api(t, 'GET', '/v1/evidence?kind=alert.disposition', { key: o.operator });
    expect(disposition.data.data[0].data).toMatchObject({ alert_id: open[0].id, rule_version: 2 });
  });

  it('structuring, rapid movement and a new counterparty each open their alert', async () => {
    const o = await organization();
    const set = async (type: string, parameters: unknown) => {
      const rule = await o.ruleOf(type);
      expect((await o.change(rule.id, { parameters })).statusCode).toBe(200);
    };
    await set('structuring', {
      currency: 'KES',
      threshold: '100.00',
      margin_bp: 1_000,
      count_min: 3,
      window_seconds: 86_400,
    });
    await set('rapid_movement', {
      currency: 'KES',
      window_seconds: 86_400,
      share_bp: 5_000,
      amount_min: '200.00',
    });
    await set('new_counterparty_high_value', { currency: 'KES', amount: '200.00' });
    const wallet = await o.wallet('1000.00');
    for (let i = 0; i < 3; i++) await o.pay(wallet, '95.00');
    const known = { type: 'mobile_money', network: 'mpesa', phone: '+254711000222' };
    await o.pay(wallet, '10.00', known);
    await o.pay(wallet, '200.00', known);
    const fresh = { type: 'mobile_money', network: 'mpesa', phone: '+254711000333' };
    await o.pay(wallet, '250.00', fresh);
    const all = await o.alerts();
    const byType = new Map(all.map((a) => [a.rule_type, a]));
    expect(byType.get('structuring')?.observed).toMatchObject({ count: 3 });
    expect(byType.get('rapid_movement')?.observed).toMatchObject({ arrived: '1000.00' });
    expect(byType.get('new_counterparty_high_value')?.observed).toMatchObject({ amount: '250.00' });
  });

  it('a velocity block that transfers racing from one wallet cannot both slip under', async () => {
    const o = await organization();
    const wallet = await o.wallet('1000.00');
    const rule = await o.ruleOf('velocity');
    await o.change(rule.id, {
      parameters: { currency: 'KES', window_seconds: 3_600, count_max: RACE_COUNT_MAX },
      action: 'block',
    });
    const results = await Promise.all(Array.from({ length: RACERS }, () => o.pay(wallet, '1.00')));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([...Array(RACE_COUNT_MAX).fill(201), ...Array(RACERS - RACE_COUNT_MAX).fill(422)]);
    await expectLedgerHealthy(t);
    const chains = await runAdminCommand(t.deps, { name: 'evidence.verify' });
    if (chains.name !== 'evidence.verify') throw new Error('wrong result');
    expect(chains.chains.filter((c) => c.break)).toEqual([]);
  });
});
