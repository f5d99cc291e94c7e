/**
 * Removing an organization's Smile ID configuration (`DELETE /v1/verification_provider`): its sealed key is
 * destroyed (the row and the sealed copies its decided changes kept), its callback address answers 404,
 * jobs in flight are withdrawn and wait for an operator, and new verifications go to the sandbox provider.
 * A governed change as configuring it is: where the policy asks for a second admin, one admin alone
 * cannot remove it, whichever key they use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSmileIdJobsOnce, SMILE_ID_POLL_AFTER_MS } from '../src/modules/compliance/index.ts';
import { findSmileIdConfig } from '../src/modules/compliance/repository/smileId.ts';
import { api, BACKENDS, createCustomer } from './support/harness.ts';
import { newOrganization } from './support/organizations.ts';
import {
  governVerificationProvider,
  kenyanIndividual,
  type SmileIdSetup,
  smileIdConfiguration,
  startSmileIdSetup,
  submitKyc,
} from './support/smileId.ts';

describe.each(BACKENDS)('removing the Smile ID configuration on %s', (backend) => {
  let s: SmileIdSetup;

  beforeAll(async () => {
    s = await startSmileIdSetup(backend);
  });
  afterAll(async () => {
    await s?.close();
  });

  const verification = async (id: string) =>
    (await api(s.t, 'GET', `/v1/verifications/${id}`, { key: s.org.key })).data;

  it('destroys the key, withdraws jobs in flight to an operator, and new verifications go to the sandbox provider', async () => {
    const answered = await submitKyc(s.t, s.org.key, '27009004'); // sent, never completes
    await runSmileIdJobsOnce(s.t.deps);
    const queued = await submitKyc(s.t, s.org.key, '27001234'); // queued, not yet sent
    const config = await findSmileIdConfig(s.t.deps.store, s.org.organizationId);

    const removed = await api(s.t, 'DELETE', '/v1/verification_provider', { key: s.org.key });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.data).toEqual({
      object: 'verification_provider',
      provider: 'smile_id',
      deleted: true,
      withdrawn_verifications: [answered, queued].sort(),
    });
    expect((await api(s.t, 'GET', '/v1/verification_provider', { key: s.org.key })).statusCode).toBe(404);
    const rows = await s.t.deps.store.query(
      'SELECT sealed_credentials FROM verification_provider_configs WHERE organization_id = $1',
      [s.org.organizationId],
    );
    expect(rows).toEqual([]);
    const late = await api(s.t, 'POST', `/v1/verification_provider/callbacks/${config?.callbackToken}`, {
      key: null,
      body: { ResultCode: '1012', PartnerParams: { job_id: answered } },
    });
    expect(late.statusCode).toBe(404);

    const sentBefore = s.simulator.requests.length;
    await runSmileIdJobsOnce(s.t.deps, new Date(Date.now() + 10 * SMILE_ID_POLL_AFTER_MS));
    expect(s.simulator.requests.length).toBe(sentBefore);
    expect(await verification(answered)).toMatchObject({ status: 'pending' });
    expect(await verification(queued)).toMatchObject({ status: 'pending' });
    const jobs = await s.t.deps.store.query(
      'SELECT state FROM verification_jobs WHERE verification_id IN ($1, $2)',
      [answered, queued],
    );
    expect(jobs.map((j) => j.state)).toEqual(['withdrawn', 'withdrawn']);

    const officer = await s.org.member(['compliance']);
    const approved = await api(s.t, 'POST', `/v1/verifications/${answered}/approve`, {
      key: officer.key,
      body: {},
    });
    expect(approved.data).toMatchObject({ status: 'verified', decided_by: 'operator' });

    const customer = await createCustomer(s.t, s.org.key);
    const fresh = await api(s.t, 'POST', `/v1/customers/${customer}/verifications`, {
      key: s.org.key,
      body: kenyanIndividual('27005555'),
    });
    expect(fresh.data).toMatchObject({ status: 'verified', decided_by: 'provider' });
    expect(s.simulator.requests.some((r) => r.rawBody.includes(fresh.data.id))).toBe(false);

    const [evidence] = await s.t.deps.store.query(
      "SELECT payload FROM evidence_records WHERE organization_id = $1 AND kind = 'verification_provider.remove'",
      [s.org.organizationId],
    );
    expect(String(evidence?.payload)).toContain('"credentials_destroyed":["api_key"]');
    expect(String(evidence?.payload)).toContain(answered);
    expect(String(evidence?.payload)).not.toContain(s.simulator.apiKey);
    const again = await api(s.t, 'DELETE', '/v1/verification_provider', { key: s.org.key });
    expect(again.statusCode).toBe(404);
  });

  it('insider: one admin cannot remove it alone where the policy asks for a second; the second does', async () => {
    const other = await newOrganization(s.t);
    await governVerificationProvider(s.t, other.key);
    const [alice, bob] = [await other.member(['admin']), await other.member(['admin'])];
    const put = await api(s.t, 'PUT', '/v1/verification_provider', {
      key: alice.key,
      body: smileIdConfiguration(s.simulator),
    });
    expect(put.statusCode, put.body).toBe(202);
    const configured = await api(s.t, 'POST', `/v1/approvals/${put.data.approval}/approve`, {
      key: bob.key,
      body: {},
    });
    expect(configured.statusCode, configured.body).toBe(200);

    const shown = async () =>
      (await api(s.t, 'GET', '/v1/verification_provider', { key: other.key })).statusCode;
    // Alice alone: her removal waits; she cannot approve it herself.
    const proposed = await api(s.t, 'DELETE', '/v1/verification_provider', { key: alice.key });
    expect(proposed.statusCode, proposed.body).toBe(202);
    expect(proposed.data).toMatchObject({
      kind: 'verification_provider',
      action: 'remove',
      status: 'pending',
    });
    const own = await api(s.t, 'POST', `/v1/approvals/${proposed.data.approval}/approve`, {
      key: alice.key,
      body: {},
    });
    expect(own.statusCode, own.body).toBe(403);
    expect(own.data.code).toBe('self_approval_forbidden');
    // The organization's own admin key, acting for no member, is governed too.
    const byKey = await api(s.t, 'DELETE', '/v1/verification_provider', { key: other.key });
    expect(byKey.statusCode, byKey.body).toBe(202);
    expect(await shown()).toBe(200);

    const approved = await api(s.t, 'POST', `/v1/approvals/${proposed.data.approval}/approve`, {
      key: bob.key,
      body: {},
    });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(await shown()).toBe(404);
    const changes = await s.t.deps.store.query(
      "SELECT status, payload FROM governed_changes WHERE organization_id = $1 AND kind = 'verification_provider' AND action = 'configure'",
      [other.organizationId],
    );
    expect(changes).toHaveLength(1);
    expect(changes[0]?.payload).toMatchObject({ credentials: { erased: true } });
  });
});
