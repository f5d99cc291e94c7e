/**
 * KYC and KYB through HTTP: submissions validated and screened; the sandbox provider's magic numbers
 * (verified, rejected, documents required, verified after a delay), a screening hit held for review, the
 * production operator path, the customer's status, tier and risk following, events and evidence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { SANDBOX_VERIFICATION_DELAY_MS } from '../src/domain/verifications.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { runDueVerifications } from '../src/modules/compliance/useCases/verifications.ts';
import {
  api,
  BACKENDS,
  complianceKey,
  createCustomer,
  startTestApp,
  type TestApp,
} from './support/harness.ts';

function individual(idNumber: string, overrides: Record<string, unknown> = {}) {
  return {
    type: 'individual',
    legal_name: 'Neema Mwangi',
    date_of_birth: '1991-03-09',
    national_id: { type: 'national_id', number: idNumber },
    phone: '+254711555666',
    address: { line1: '5 Kenyatta Road', city: 'Nakuru', country: 'KE' },
    ...overrides,
  };
}

function business(overrides: Record<string, unknown> = {}) {
  return {
    type: 'business',
    legal_name: 'Tembo Hardware Ltd',
    registration_number: 'PVT-2020-1234',
    country: 'KE',
    beneficial_owners: [
      {
        name: 'Juma Tembo',
        date_of_birth: '1975-01-01',
        national_id: { type: 'passport', number: 'AK123456' },
        ownership_bp: 7_000,
      },
    ],
    ...overrides,
  };
}

describe.each(BACKENDS)('verifications in the sandbox on %s', (backend) => {
  let t: TestApp;
  let operator: string;

  beforeAll(async () => {
    t = await startTestApp(backend);
    operator = await complianceKey(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const submit = (customer: string, body: unknown) =>
    api(t, 'POST', `/v1/customers/${customer}/verifications`, { body });
  const customerOf = async (id: string) => (await api(t, 'GET', `/v1/customers/${id}`)).data;

  it('verifies an individual: the customer becomes verified, tier 1, low risk; the id number is masked', async () => {
    const customer = await createCustomer(t);
    expect(await customerOf(customer)).toMatchObject({
      kyc_status: 'unverified',
      tier: 0,
      risk_level: 'medium',
    });
    const verified = await submit(customer, individual('27001234'));
    expect(verified.statusCode, verified.body).toBe(201);
    expect(verified.data).toMatchObject({
      object: 'verification',
      status: 'verified',
      reason: null,
      decided_by: 'provider',
      submission: { national_id: { type: 'national_id', number: '****1234' } },
    });
    expect(verified.body).not.toContain('27001234');
    expect(await customerOf(customer)).toMatchObject({ kyc_status: 'verified', tier: 1, risk_level: 'low' });
    const events = await api(t, 'GET', '/v1/events?type=customer.verification.updated');
    const event = events.data.data.find((e: any) => e.data.customer_id === customer);
    expect(event.data).toMatchObject({ status: 'verified', kyc_status: 'verified', tier: 1 });
    expect(JSON.stringify(event)).not.toContain('27001234');
    const list = await api(t, 'GET', `/v1/customers/${customer}/verifications`);
    expect(list.data.data.map((v: any) => v.id)).toEqual([verified.data.id]);
    expect((await api(t, 'GET', `/v1/verifications/${verified.data.id}`)).data).toEqual(verified.data);
  });

  it('the magic numbers reject, ask for documents, and allow a resubmission', async () => {
    const rejected = await createCustomer(t);
    const first = await submit(rejected, individual('27009991'));
    expect(first.data).toMatchObject({ status: 'rejected', reason: 'identity_mismatch' });
    expect(await customerOf(rejected)).toMatchObject({ kyc_status: 'rejected', tier: 0, risk_level: 'high' });
    expect((await submit(rejected, individual('27009994'))).data).toMatchObject({
      status: 'rejected',
      reason: 'document_expired',
    });
    const again = await submit(rejected, individual('27005555'));
    expect(again.data.status).toBe('verified');
    const documents = await createCustomer(t);
    expect((await submit(documents, individual('27009992'))).data).toMatchObject({
      status: 'documents_required',
      reason: 'documents_unreadable',
    });
    expect((await customerOf(documents)).kyc_status).toBe('documents_required');
    const minor = await createCustomer(t);
    const young = new Date(t.deps.now().getTime() - 10 * 365 * 86_400_000).toISOString().slice(0, 10);
    expect((await submit(minor, individual('27001111', { date_of_birth: young }))).data).toMatchObject({
      status: 'rejected',
      reason: 'underage',
    });
  });

  it('a deferred decision is pending until the worker decides it, and nothing may be submitted meanwhile', async () => {
    const customer = await createCustomer(t);
    const pending = await submit(customer, individual('27009993'));
    expect(pending.data).toMatchObject({ status: 'pending', decided_by: null });
    expect((await customerOf(customer)).kyc_status).toBe('pending');
    const again = await submit(customer, individual('27001234'));
    expect(again.statusCode).toBe(409);
    expect(again.data.code).toBe('invalid_state_transition');
    expect(await runDueVerifications(t.deps)).toBe(0);
    const later = { ...t.deps, now: () => new Date(Date.now() + SANDBOX_VERIFICATION_DELAY_MS + 1_000) };
    expect(await runDueVerifications(later)).toBeGreaterThanOrEqual(1);
    expect((await api(t, 'GET', `/v1/verifications/${pending.data.id}`)).data.status).toBe('verified');
    expect((await customerOf(customer)).kyc_status).toBe('verified');
  });

  it('verifies a business with its beneficial owners; tier 2', async () => {
    const customer = (await api(t, 'POST', '/v1/customers', { body: { type: 'business', name: 'Tembo' } }))
      .data.id;
    const verified = await submit(customer, business());
    expect(verified.statusCode, verified.body).toBe(201);
    expect(verified.data.submission.beneficial_owners[0].national_id.number).toBe('****3456');
    expect(await customerOf(customer)).toMatchObject({ kyc_status: 'verified', tier: 2 });
  });

  it('refuses bad submissions naming the field, and writes nothing', async () => {
    const person = await createCustomer(t);
    const company = (await api(t, 'POST', '/v1/customers', { body: { type: 'business', name: 'Co' } })).data
      .id;
    const cases: [string, unknown, string][] = [
      [person, business(), 'type'],
      [person, individual('27001234', { phone: undefined }), 'phone'],
      [person, individual('27001234', { date_of_birth: '1990-02-30' }), 'date_of_birth'],
      [person, individual('1'), 'national_id.number'],
      [person, individual('27001234', { registration_number: 'X1234' }), 'registration_number'],
      [
        company,
        business({ beneficial_owners: [{ ...business().beneficial_owners[0], ownership_bp: 2_000 }] }),
        'beneficial_owners',
      ],
      [
        company,
        business({
          beneficial_owners: [
            { ...business().beneficial_owners[0], ownership_bp: 7_000 },
            { ...business().beneficial_owners[0], ownership_bp: 4_000 },
          ],
        }),
        'beneficial_owners',
      ],
    ];
    for (const [customer, body, param] of cases) {
      const response = await submit(customer, body);
      expect(response.statusCode, `${param}: ${response.body}`).toBe(400);
      expect(response.data.param).toBe(param);
    }
    expect((await api(t, 'GET', `/v1/customers/${person}/verifications`)).data.data).toEqual([]);
    expect((await submit('cus_01jcz3m5e7x8y9a0b1c2d3e4f5', individual('27001234'))).statusCode).toBe(404);
  });

  it('names every missing field of a submission in one answer, `param` the first, for either type', async () => {
    const person = await createCustomer(t);
    const company = (await api(t, 'POST', '/v1/customers', { body: { type: 'business', name: 'Co' } })).data
      .id;
    const bare = await submit(person, { type: 'individual', phone: '0711', registration_number: 'X1234' });
    expect(bare.statusCode).toBe(400);
    expect(bare.data.param).toBe('legal_name');
    expect(bare.data.errors.map((e: { param: string; code: string }) => [e.param, e.code])).toEqual(
      expect.arrayContaining([
        ['legal_name', 'missing'],
        ['date_of_birth', 'missing'],
        ['national_id', 'missing'],
        ['address', 'missing'],
        ['registration_number', 'unknown_field'],
        ['phone', 'invalid_format'],
      ]),
    );
    expect(bare.data.errors).toHaveLength(6);
    const kyb = await submit(company, { type: 'business', legal_name: 'Co Ltd' });
    expect(kyb.statusCode).toBe(400);
    expect(kyb.data.errors.map((e: { param: string }) => e.param)).toEqual([
      'registration_number',
      'country',
      'beneficial_owners',
    ]);
    expect(kyb.data.param).toBe('registration_number');
    const untyped = await submit(person, { legal_name: 'Neema Mwangi' });
    expect(untyped.data).toMatchObject({ param: 'type', errors: [{ param: 'type', code: 'missing' }] });
    const unknownType = await submit(person, { type: 'trust', legal_name: 'Neema Mwangi' });
    expect(unknownType.data).toMatchObject({
      param: 'type',
      errors: [{ param: 'type', code: 'invalid_value' }],
    });
    const mismatch = await submit(company, individual('27001234'));
    expect(mismatch.data).toMatchObject({ param: 'type', code: 'validation_error' });
    expect(mismatch.data.detail).toBe('a business customer submits a business verification');
    const otherWay = await submit(person, business());
    expect(otherWay.data.detail).toBe('an individual customer submits an individual verification');
    expect((await api(t, 'GET', `/v1/customers/${person}/verifications`)).data.data).toEqual([]);
  });

  it('a name on the sanctions list holds the verification for review: cleared it is decided, rejected it is a sanctions match', async () => {
    const listed = individual('27001234', {
      legal_name: 'Viktor Dragomirov',
      date_of_birth: '1968-04-12',
      address: { line1: 'x', city: 'y', country: 'RU' },
    });
    const cleared = await createCustomer(t);
    const held = await submit(cleared, listed);
    expect(held.data).toMatchObject({ status: 'pending' });
    expect(held.body).not.toMatch(/MKS-|SANDBOX-/);
    const operatorTooEarly = await api(t, 'POST', `/v1/verifications/${held.data.id}/approve`, {
      key: operator,
      body: {},
    });
    expect(operatorTooEarly.statusCode).toBe(409);
    const cases = (await api(t, 'GET', '/v1/reviews?status=open&kind=screening', { key: operator })).data
      .data;
    const reviewCase = cases.find((c: any) => c.customer === cleared);
    expect(reviewCase).toMatchObject({ transfer: null, wallet: null });
    expect(
      (await api(t, 'POST', `/v1/reviews/${reviewCase.id}/clear`, { key: operator, body: {} })).statusCode,
    ).toBe(200);
    expect((await api(t, 'GET', `/v1/verifications/${held.data.id}`)).data.status).toBe('verified');

    const confirmed = await createCustomer(t);
    const heldToo = await submit(confirmed, listed);
    const confirmCase = (
      await api(t, 'GET', '/v1/reviews?status=open&kind=screening', { key: operator })
    ).data.data.find((c: any) => c.customer === confirmed);
    expect(
      (await api(t, 'POST', `/v1/reviews/${confirmCase.id}/reject`, { key: operator, body: {} })).statusCode,
    ).toBe(200);
    expect((await api(t, 'GET', `/v1/verifications/${heldToo.data.id}`)).data).toMatchObject({
      status: 'rejected',
      reason: 'sanctions_match',
    });
    expect(await customerOf(confirmed)).toMatchObject({ kyc_status: 'rejected', risk_level: 'high' });
    const evidence = (await api(t, 'GET', `/v1/customers/${confirmed}/evidence`, { key: operator })).data
      .data;
    expect(evidence.map((r: any) => r.kind)).toEqual([
      'review.disposition',
      'verification.result',
      'screening.result',
    ]);
    expect(evidence[2].data).toMatchObject({ decision: 'hit' });
  });

  it('an operator overrides the risk level and clears the override, each as evidence; integrators cannot', async () => {
    const customer = await createCustomer(t);
    expect(
      (await api(t, 'POST', `/v1/customers/${customer}/risk`, { body: { risk_level: 'low', reason: 'x' } }))
        .statusCode,
    ).toBe(403);
    const set = await api(t, 'POST', `/v1/customers/${customer}/risk`, {
      key: operator,
      body: { risk_level: 'high', reason: 'adverse media' },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.data).toMatchObject({ risk_level: 'high', risk_level_overridden: true });
    const cleared = await api(t, 'DELETE', `/v1/customers/${customer}/risk`, { key: operator });
    expect(cleared.data).toMatchObject({ risk_level: 'medium', risk_level_overridden: false });
    const evidence = (await api(t, 'GET', `/v1/customers/${customer}/evidence`, { key: operator })).data.data;
    expect(evidence.map((r: any) => [r.kind, r.data.after])).toEqual([
      ['risk.override', null],
      ['risk.override', 'high'],
    ]);
  });

  it('the seed has a customer in each KYC state, and the evidence chain verifies', async () => {
    const customers = (await api(t, 'GET', '/v1/customers?limit=100')).data.data;
    const seeded = new Set(
      customers.filter((c: any) => c.metadata.seed === 'true').map((c: any) => c.kyc_status),
    );
    expect(seeded).toEqual(new Set(['unverified', 'pending', 'verified', 'rejected', 'documents_required']));
    const result = await runAdminCommand(t.deps, { name: 'evidence.verify' });
    if (result.name !== 'evidence.verify') throw new Error('wrong result');
    expect(result.chains.filter((c) => c.break)).toEqual([]);
  });
});

describe.each(BACKENDS)('verifications in production on %s', (backend) => {
  let t: TestApp;
  let operator: string;

  beforeAll(async () => {
    t = await startTestApp(backend, 'production');
    operator = (await issueApiKey(t.deps, { organizationName: 'Production Org', scopes: ['compliance'] }))
      .key;
  });
  afterAll(async () => {
    await t.close();
  });

  it('waits for an operator, who approves, rejects or asks for documents once', async () => {
    const decide = (id: string, path: string, body: unknown, key = operator) =>
      api(t, 'POST', `/v1/verifications/${id}/${path}`, { key, body });
    const results: string[] = [];
    for (const [path, body] of [
      ['approve', {}],
      ['reject', { reason: 'identity_mismatch' }],
      ['request_documents', { reason: 'address_unverified' }],
    ] as const) {
      const customer = await createCustomer(t);
      const pending = await api(t, 'POST', `/v1/customers/${customer}/verifications`, {
        body: individual('27001234'),
      });
      expect(pending.data).toMatchObject({ status: 'pending', decided_by: null });
      expect((await decide(pending.data.id, path, body, t.key)).statusCode).toBe(403);
      const decided = await decide(pending.data.id, path, body);
      expect(decided.statusCode, decided.body).toBe(200);
      expect(decided.data.decided_by).toBe('operator');
      results.push(decided.data.status);
      expect((await decide(pending.data.id, 'approve', {})).statusCode).toBe(409);
    }
    expect(results).toEqual(['verified', 'rejected', 'documents_required']);
    const missingReason = await decide('kyc_01jcz3m5e7x8y9a0b1c2d3e4f5', 'reject', {});
    expect(missingReason.statusCode).toBe(400);
    expect(missingReason.data.param).toBe('reason');
  });
});
