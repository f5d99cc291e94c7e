/**
 * The console's forms that write through one app function for the signed-in organization (decide a review
 * case, resolve an AML alert, resolve a reconciliation exception, start an export) over HTTP (app.inject):
 * each redirects with its notice, and the API then reads what the form wrote, with who wrote it. The
 * browser walk-through (test/console.browser.test.ts) presses the same buttons where a Chromium is found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleClient, signedIn } from './support/console.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

describe.each(BACKENDS)('console form writes on %s', (backend) => {
  let t: TestApp;
  let org: TestOrganization;
  let operator: { id: string; email: string; key: string };
  let client: ConsoleClient;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    org = await newOrganization(t);
    operator = await org.member(['admin', 'compliance']);
    client = await signedIn(t, org.name, operator.email);
  });
  afterAll(async () => {
    await t.close();
  });

  it('decides a review case and resolves an AML alert, as the API reads them after', async () => {
    for (const [name, action, amount] of [
      ['Reviewed payouts', 'review', '9000.00'],
      ['Large payouts', 'alert', '5000.00'],
    ] as const) {
      const rule = await api(t, 'POST', '/v1/aml/rules', {
        key: org.key,
        body: { name, type: 'single_transfer_threshold', parameters: { currency: 'KES', amount }, action },
      });
      expect(rule.statusCode, rule.body).toBe(201);
    }
    const wallet = await fundedWallet(t, '50000.00', 'KES', org.key);
    for (const amount of ['6000.00', '9500.00']) {
      const payout = await api(t, 'POST', '/v1/transfers', {
        key: org.key,
        body: { source: wallet, destination: mobileMoney('+254711000888'), amount, currency: 'KES' },
      });
      expect(payout.statusCode, payout.body).toBe(201);
    }

    const review = (await api(t, 'GET', '/v1/reviews', { key: org.key })).data.data[0];
    expect(review.status).toBe('open');
    const decided = await client.submit('/console/reviews', `/console/reviews/${review.id}/decide`, {
      decision: 'clear',
      note: 'payee known',
    });
    expect(decided.statusCode, decided.body).toBe(303);
    expect(decided.headers.location).toBe('/console/reviews?notice=review_decided');
    const reviewAfter = (await api(t, 'GET', `/v1/reviews/${review.id}`, { key: org.key })).data;
    expect(reviewAfter).toMatchObject({ status: 'cleared', note: 'payee known' });

    const alert = (await api(t, 'GET', '/v1/aml/alerts?status=open', { key: org.key })).data.data[0];
    const resolved = await client.submit('/console/alerts', `/console/alerts/${alert.id}/resolve`, {
      disposition: 'false_positive',
      note: 'known payroll run',
    });
    expect(resolved.statusCode, resolved.body).toBe(303);
    expect(resolved.headers.location).toBe('/console/alerts?notice=alert_resolved');
    const alertAfter = (await api(t, 'GET', `/v1/aml/alerts/${alert.id}`, { key: org.key })).data;
    expect(alertAfter).toMatchObject({
      status: 'resolved',
      disposition: 'false_positive',
      note: 'known payroll run',
    });
  });

  it('resolves a reconciliation exception, recorded as the operator’s', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const statement = await api(t, 'POST', '/v1/sandbox/statements', {
      key: operator.key,
      body: { rail: 'mobile_money', from: today, to: today, mismatches: ['unknown'] },
    });
    expect(statement.statusCode, statement.body).toBe(200);
    const imported = await api(t, 'POST', '/v1/reconciliation/statements', {
      key: operator.key,
      body: { rail: 'mobile_money', from: today, to: today, lines: statement.data.lines },
    });
    expect(imported.statusCode, imported.body).toBe(201);
    const exception = (
      await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key: operator.key })
    ).data.data[0];
    const resolved = await client.submit(
      '/console/reconciliation',
      `/console/reconciliation/${exception.id}/resolve`,
      { action: 'write_off', note: 'not ours: partner test line' },
    );
    expect(resolved.statusCode, resolved.body).toBe(303);
    expect(resolved.headers.location).toBe('/console/reconciliation?notice=exception_resolved');
    const after = (
      await api(t, 'GET', `/v1/reconciliation/exceptions/${exception.id}`, { key: operator.key })
    ).data;
    expect(after).toMatchObject({
      status: 'resolved',
      resolution: 'write_off',
      note: 'not ours: partner test line',
      resolved_by: operator.id,
    });
  });

  it('starts an export for the signed-in member', async () => {
    const started = await client.submit('/console/exports', '/console/exports', {
      type: 'transfers',
      format: 'csv',
    });
    expect(started.statusCode, started.body).toBe(303);
    expect(started.headers.location).toBe('/console/exports?notice=export_started');
    const exports = (await api(t, 'GET', '/v1/exports', { key: org.key })).data.data;
    expect(exports[0]).toMatchObject({ type: 'transfers', format: 'csv', created_by: operator.id });
  });
});
