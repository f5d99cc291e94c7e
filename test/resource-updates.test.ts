/**
 * Changing customers and wallets through HTTP: PATCH /v1/customers/{id} and PATCH /v1/wallets/{id}, each
 * idempotent, recorded as evidence and announced by an event; what a change does to a verification; bad
 * input, unknown fields, other organizations' resources and closed wallets refused.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_VERIFICATION_DELAY_MS } from '../src/domain/verifications.ts';
import { runDueVerifications } from '../src/modules/compliance/useCases/verifications.ts';
import {
  type ApiResponse,
  api,
  BACKENDS,
  complianceKey,
  newOrganizationKey,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { fundedWallet } from './support/ledger.ts';

const ADDRESS = { line1: '5 Kenyatta Road', city: 'Nakuru', country: 'KE' };

function individualSubmission(idNumber: string) {
  return {
    type: 'individual',
    legal_name: 'Neema Mwangi',
    date_of_birth: '1991-03-09',
    national_id: { type: 'national_id', number: idNumber },
    phone: '+254711555666',
    address: ADDRESS,
  };
}

function businessSubmission() {
  return {
    type: 'business',
    legal_name: 'Tembo Hardware Ltd',
    registration_number: 'PVT-2020-1234',
    country: 'KE',
    beneficial_owners: [
      {
        name: 'Juma Tembo',
        date_of_birth: '1970-01-01',
        national_id: { type: 'national_id', number: '11112222' },
        ownership_bp: 10_000,
      },
    ],
  };
}

const digest = (value: unknown) =>
  createHash('sha256')
    .update(canonicalize(value ?? null) as string)
    .digest('hex');

describe.each(BACKENDS)('customer and wallet updates on %s', (backend) => {
  let t: TestApp;
  let compliance: string;
  let keyCounter = 0;
  beforeAll(async () => {
    t = await startTestApp(backend);
    compliance = await complianceKey(t);
  });
  afterAll(() => t.close());

  const patch = (path: string, body: unknown, options: { key?: string; idempotencyKey?: string } = {}) =>
    api(t, 'PATCH', path, {
      body,
      ...(options.key ? { key: options.key } : {}),
      headers: { 'idempotency-key': options.idempotencyKey ?? `update-${backend}-${++keyCounter}` },
    });

  function expectProblem(response: ApiResponse, status: number, code: string, param?: string) {
    expect(response.statusCode, response.body).toBe(status);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.data).toMatchObject({ status, code, type: `urn:mkoba:error:${code}` });
    if (param !== undefined) expect(response.data.param).toBe(param);
  }

  async function customer(type: 'individual' | 'business', body: Record<string, unknown> = {}) {
    const created = await api(t, 'POST', '/v1/customers', {
      body: { type, name: type === 'individual' ? 'Neema Mwangi' : 'Tembo Hardware Ltd', ...body },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data as { id: string; kyc_status: string };
  }

  async function verify(customerId: string, submission: unknown) {
    const submitted = await api(t, 'POST', `/v1/customers/${customerId}/verifications`, { body: submission });
    expect(submitted.statusCode, submitted.body).toBe(201);
    return submitted.data;
  }

  async function eventsOf(type: string, resourceId: string) {
    const listed = await api(t, 'GET', `/v1/events?type=${type}&limit=100`);
    expect(listed.statusCode, listed.body).toBe(200);
    return listed.data.data.filter(
      (e: { data: Record<string, unknown> }) =>
        e.data.customer_id === resourceId || e.data.wallet_id === resourceId,
    );
  }

  async function evidenceOf(resource: 'customers' | 'wallets', id: string, kind: string) {
    const listed = await api(t, 'GET', `/v1/${resource}/${id}/evidence`, { key: compliance });
    expect(listed.statusCode, listed.body).toBe(200);
    return listed.data.data.filter((r: { kind: string }) => r.kind === kind);
  }

  it('creates a customer with an address and changes email, address and metadata of a verified individual, who stays verified', async () => {
    const { id } = await customer('individual', { address: ADDRESS });
    expect((await api(t, 'GET', `/v1/customers/${id}`)).data.address).toEqual(ADDRESS);
    await verify(id, individualSubmission('30000001'));
    const changed = await patch(`/v1/customers/${id}`, {
      email: 'neema@example.com',
      metadata: { crm: 'C-1' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.data).toMatchObject({
      id,
      email: 'neema@example.com',
      metadata: { crm: 'C-1' },
      kyc_status: 'verified',
      tier: 1,
      address: ADDRESS,
    });
    expect((await api(t, 'GET', `/v1/customers/${id}`)).data).toEqual(changed.data);

    const [event, ...more] = await eventsOf('customer.updated', id);
    expect(more).toEqual([]);
    expect(event.data).toEqual({
      customer_id: id,
      type: 'individual',
      changed: ['email', 'metadata'],
      kyc_status: 'verified',
      previous_kyc_status: 'verified',
      verification_required_for: [],
      tier: 1,
    });
    const [record] = await evidenceOf('customers', id, 'customer.update');
    expect(record.customer_id).toBe(id);
    expect(record.actor).toMatch(/^key_/);
    expect(record.data).toEqual({
      changes: {
        email: { from_sha256: digest(null), to_sha256: digest('neema@example.com') },
        metadata: { from_sha256: digest({}), to_sha256: digest({ crm: 'C-1' }) },
      },
      kyc_status: 'verified',
      previous_kyc_status: 'verified',
      verification_required_for: [],
    });
  });

  it('a new legal name on a verified individual drops it to unverified (tier 0) until a new verification passes', async () => {
    const { id } = await customer('individual');
    await verify(id, individualSubmission('30000001'));
    const renamed = await patch(`/v1/customers/${id}`, { name: 'Neema Wanjiru' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.data).toMatchObject({ name: 'Neema Wanjiru', kyc_status: 'unverified', tier: 0 });
    const [event] = await eventsOf('customer.updated', id);
    expect(event.data).toMatchObject({
      changed: ['name'],
      kyc_status: 'unverified',
      previous_kyc_status: 'verified',
      verification_required_for: ['name'],
      tier: 0,
    });
    const [record] = await evidenceOf('customers', id, 'customer.update');
    expect(record.data.changes).toEqual({ name: { from: 'Neema Mwangi', to: 'Neema Wanjiru' } });

    // A phone or address change asks for one too; clearing the address is a change of it.
    await verify(id, { ...individualSubmission('30000001'), legal_name: 'Neema Wanjiru' });
    expect((await api(t, 'GET', `/v1/customers/${id}`)).data.kyc_status).toBe('verified');
    const moved = await patch(`/v1/customers/${id}`, { phone: '+254722000111' });
    expect(moved.data).toMatchObject({ phone: '+254722000111', kyc_status: 'unverified' });
  });

  it('a verified business keeps its verification for a new phone or address, not for a new name', async () => {
    const { id } = await customer('business');
    await verify(id, businessSubmission());
    const moved = await patch(`/v1/customers/${id}`, { phone: '+254202000111', address: ADDRESS });
    expect(moved.data).toMatchObject({ kyc_status: 'verified', tier: 2, address: ADDRESS });
    const cleared = await patch(`/v1/customers/${id}`, { address: null, phone: null });
    expect(cleared.data).toMatchObject({ kyc_status: 'verified', address: null, phone: null });
    const renamed = await patch(`/v1/customers/${id}`, { name: 'Tembo Holdings Ltd' });
    expect(renamed.data).toMatchObject({ name: 'Tembo Holdings Ltd', kyc_status: 'unverified', tier: 0 });
  });

  it('while a verification is pending its facts cannot change; email can', async () => {
    const { id } = await customer('individual');
    // 9993: the sandbox provider decides after a delay.
    await verify(id, individualSubmission('30009993'));
    expectProblem(
      await patch(`/v1/customers/${id}`, { name: 'Someone Else' }),
      409,
      'invalid_state_transition',
      'name',
    );
    expectProblem(
      await patch(`/v1/customers/${id}`, { email: 'n@example.com', address: ADDRESS }),
      409,
      'invalid_state_transition',
      'address',
    );
    const email = await patch(`/v1/customers/${id}`, { email: 'n@example.com' });
    expect(email.data).toMatchObject({ email: 'n@example.com', kyc_status: 'pending' });
    expect(await eventsOf('customer.updated', id)).toHaveLength(1);
    const later = { ...t.deps, now: () => new Date(Date.now() + SANDBOX_VERIFICATION_DELAY_MS + 1_000) };
    await runDueVerifications(later);
    expect((await api(t, 'GET', `/v1/customers/${id}`)).data.kyc_status).toBe('verified');
  });

  it('is idempotent: a retry replays the answer, another body under the key is refused, an unchanged value writes nothing', async () => {
    const { id } = await customer('individual');
    const first = await patch(
      `/v1/customers/${id}`,
      { email: 'a@example.com' },
      { idempotencyKey: `cu-${backend}` },
    );
    const again = await patch(
      `/v1/customers/${id}`,
      { email: 'a@example.com' },
      { idempotencyKey: `cu-${backend}` },
    );
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expectProblem(
      await patch(`/v1/customers/${id}`, { email: 'b@example.com' }, { idempotencyKey: `cu-${backend}` }),
      422,
      'idempotency_key_reused',
    );
    const unchanged = await patch(`/v1/customers/${id}`, { email: 'a@example.com' });
    expect(unchanged.statusCode).toBe(200);
    expect(unchanged.data.updated_at).toBe(first.data.updated_at);
    expect(await eventsOf('customer.updated', id)).toHaveLength(1);
    expect(await evidenceOf('customers', id, 'customer.update')).toHaveLength(1);
  });

  it('refuses bad input, unknown fields, other organizations and read-only keys', async () => {
    const { id } = await customer('individual');
    expectProblem(await patch(`/v1/customers/${id}`, { type: 'business' }), 400, 'validation_error', 'type');
    expectProblem(await patch(`/v1/customers/${id}`, { phone: '0712' }), 400, 'validation_error', 'phone');
    expectProblem(await patch(`/v1/customers/${id}`, { name: '' }), 400, 'validation_error', 'name');
    expectProblem(await patch(`/v1/customers/${id}`, { name: null }), 400, 'validation_error', 'name');
    expectProblem(
      await patch(`/v1/customers/${id}`, { address: { line1: '1 Road', country: 'KE' } }),
      400,
      'validation_error',
      'address.city',
    );
    expectProblem(
      await patch(`/v1/customers/${id}`, { metadata: { ok: 5 } }),
      400,
      'validation_error',
      'metadata.ok',
    );
    expectProblem(await patch(`/v1/customers/${id}`, {}), 400, 'validation_error');
    expectProblem(await patch('/v1/customers/cus_nope', { name: 'X' }), 400, 'validation_error', 'id');
    const other = await newOrganizationKey(t);
    expectProblem(await patch(`/v1/customers/${id}`, { name: 'X' }, { key: other }), 404, 'resource_missing');
    const reader = await newOrganizationKey(t, ['read']);
    expectProblem(
      await patch(`/v1/customers/${id}`, { name: 'X' }, { key: reader }),
      403,
      'insufficient_permissions',
    );
    expect((await api(t, 'GET', `/v1/customers/${id}`)).data.name).toBe('Neema Mwangi');
  });

  it('changes a wallet’s metadata, frozen or not, with its event and evidence; a closed wallet never changes', async () => {
    const walletId = await fundedWallet(t, '0');
    const changed = await patch(`/v1/wallets/${walletId}`, { metadata: { purpose: 'payroll' } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.data).toMatchObject({ id: walletId, metadata: { purpose: 'payroll' }, status: 'active' });
    expect((await api(t, 'GET', `/v1/wallets/${walletId}`)).data).toEqual(changed.data);
    const [event] = await eventsOf('wallet.updated', walletId);
    expect(event.data).toMatchObject({
      wallet_id: walletId,
      status: 'active',
      changed: ['metadata'],
      metadata: { purpose: 'payroll' },
    });
    const [record] = await evidenceOf('wallets', walletId, 'wallet.update');
    expect(record.data).toEqual({
      changes: { metadata: { from_sha256: digest({}), to_sha256: digest({ purpose: 'payroll' }) } },
    });

    const frozen = await api(t, 'POST', `/v1/wallets/${walletId}/freeze`, {
      key: compliance,
      body: { reason: 'compliance_review' },
    });
    expect(frozen.statusCode, frozen.body).toBe(200);
    const whileFrozen = await patch(`/v1/wallets/${walletId}`, { metadata: { purpose: 'savings' } });
    expect(whileFrozen.data).toMatchObject({ status: 'frozen', metadata: { purpose: 'savings' } });
    await api(t, 'POST', `/v1/wallets/${walletId}/unfreeze`, {
      key: compliance,
      body: { reason: 'review_cleared' },
    });
    const closed = await api(t, 'POST', `/v1/wallets/${walletId}/close`, {
      body: { reason: 'customer_request' },
    });
    expect(closed.statusCode, closed.body).toBe(200);
    expectProblem(await patch(`/v1/wallets/${walletId}`, { metadata: {} }), 409, 'wallet_not_active');
    expect((await api(t, 'GET', `/v1/wallets/${walletId}`)).data.metadata).toEqual({ purpose: 'savings' });
  });

  it('refuses a wallet change of owner or currency, a missing body and another organization’s wallet', async () => {
    const walletId = await fundedWallet(t, '0');
    expectProblem(
      await patch(`/v1/wallets/${walletId}`, { metadata: {}, currency: 'UGX' }),
      400,
      'validation_error',
      'currency',
    );
    expectProblem(await patch(`/v1/wallets/${walletId}`, {}), 400, 'validation_error', 'metadata');
    const other = await newOrganizationKey(t);
    expectProblem(
      await patch(`/v1/wallets/${walletId}`, { metadata: {} }, { key: other }),
      404,
      'resource_missing',
    );
    const key = `wu-${backend}`;
    const first = await patch(`/v1/wallets/${walletId}`, { metadata: { a: '1' } }, { idempotencyKey: key });
    const replay = await patch(`/v1/wallets/${walletId}`, { metadata: { a: '1' } }, { idempotencyKey: key });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(await eventsOf('wallet.updated', walletId)).toHaveLength(1);
  });
});
