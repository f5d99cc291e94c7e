/**
 * Smile ID as an organization's verification provider, through the HTTP layer against the Smile ID
 * simulator as a real server: a verification is sent as an async job by the worker, decided by the signed
 * callback (once, whatever is repeated or late), recovered by polling /job_status when the callback never
 * comes; result codes mapped to statuses and reasons; a forged callback changes nothing; the API key sealed
 * at rest; the base URL under the outbound address guard.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../src/app/evidence.ts';
import {
  configureSmileId,
  runSmileIdJobsOnce,
  SMILE_ID_POLL_AFTER_MS,
  SMILE_ID_RETRY_AFTER_MS,
} from '../src/modules/compliance/index.ts';
import { findSmileIdConfig, listSmileIdCallbacks } from '../src/modules/compliance/repository/smileId.ts';
import {
  isSmileIdPaused,
  SMILE_ID_CALLS_BEFORE_PAUSE,
  SMILE_ID_RATE,
} from '../src/modules/compliance/useCases/smileId/guard.ts';
import { type SmileIdSimulator, startSmileIdSimulator } from '../src/simulators/smileId/index.ts';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from './support/harness.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';
import { governVerificationProvider, kenyanIndividual } from './support/smileId.ts';

/** How long a test waits for a callback to be applied, and how often it looks. */
const WAIT_MS = 3_000;
const POLL_MS = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const individual = kenyanIndividual;

function business(registrationNumber: string, country = 'KE') {
  return {
    type: 'business',
    legal_name: 'Tembo Hardware Ltd',
    registration_number: registrationNumber,
    country,
    beneficial_owners: [
      {
        name: 'Juma Tembo',
        date_of_birth: '1975-01-01',
        national_id: { type: 'passport', number: 'AK123456' },
        ownership_bp: 7_000,
      },
    ],
  };
}

describe.each(BACKENDS)('Smile ID as the verification provider on %s', (backend) => {
  let t: TestApp;
  let simulator: SmileIdSimulator;
  let org: TestOrganization;

  const call = (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    options: { body?: unknown; key?: string | null } = {},
  ) => api(t, method, url, { key: org.key, ...options });

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    simulator = await startSmileIdSimulator();
    org = await newOrganization(t);
    const configured = await call('PUT', '/v1/verification_provider', {
      body: {
        provider: 'smile_id',
        settings: { base_url: simulator.apiUrl, partner_id: simulator.partnerId },
        credentials: { api_key: simulator.apiKey },
      },
    });
    expect(configured.statusCode, configured.body).toBe(200);
  });
  afterAll(async () => {
    await simulator?.close();
    await t?.close();
  });

  async function submitted(body: unknown, type: 'individual' | 'business' = 'individual') {
    const customer =
      type === 'individual'
        ? await createCustomer(t, org.key)
        : (await call('POST', '/v1/customers', { body: { type: 'business', name: 'Tembo' } })).data.id;
    const response = await call('POST', `/v1/customers/${customer}/verifications`, { body });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.data).toMatchObject({ status: 'pending', decided_by: null });
    return response.data.id as string;
  }

  const verification = async (id: string) => (await call('GET', `/v1/verifications/${id}`)).data;

  /** Waits until the verification is no longer pending (a callback applied it). */
  async function decided(id: string) {
    const deadline = Date.now() + WAIT_MS;
    while (Date.now() < deadline) {
      const current = await verification(id);
      if (current.status !== 'pending') return current;
      await sleep(POLL_MS);
    }
    throw new Error(`verification ${id} was not decided`);
  }

  const callbacksOf = (id: string) => listSmileIdCallbacks(t.deps.store, org.organizationId, id);

  it('sends a KYC as a signed async job; the signed callback verifies it, as smile_id with the code', async () => {
    const id = await submitted(individual('27001234'));
    expect(await runSmileIdJobsOnce(t.deps)).toBeGreaterThanOrEqual(1);
    const sent = simulator.requests.find((r) => r.rawBody.includes(id));
    expect(sent?.path).toBe('/v1/async_id_verification');
    expect(JSON.parse(sent?.rawBody ?? '{}')).toMatchObject({
      partner_id: simulator.partnerId,
      country: 'KE',
      id_type: 'NATIONAL_ID',
      id_number: '27001234',
      first_name: 'Neema',
      middle_name: 'Wanjiku',
      last_name: 'Mwangi',
      dob: '1991-03-09',
      partner_params: { job_id: id, job_type: 5 },
      callback_url: expect.stringMatching(/\/v1\/verification_provider\/callbacks\/[A-Za-z0-9_-]{43}$/),
    });
    expect(await decided(id)).toMatchObject({ status: 'verified', reason: null, decided_by: 'provider' });
    const [callback] = await callbacksOf(id);
    expect(callback?.outcome).toBe('applied');
    const rows = await t.deps.store.query(
      "SELECT payload FROM evidence_records WHERE kind = 'verification.result' AND payload LIKE '%' || $1 || '%'",
      [id],
    );
    expect(String(rows[0]?.payload)).toContain('"decided_by":"smile_id"');
    expect(String(rows[0]?.payload)).toContain('"provider_result_code":"1012"');
  });

  it.each([
    ['27001013', 'rejected', 'identity_mismatch'],
    ['27001022', 'rejected', 'identity_mismatch'],
    ['AB12345', 'documents_required', 'documents_unreadable'],
  ])('a result for %s becomes %s (%s)', async (idNumber, status, reason) => {
    const id = await submitted(individual(idNumber));
    await runSmileIdJobsOnce(t.deps);
    expect(await decided(id)).toMatchObject({ status, reason, decided_by: 'provider' });
  });

  it('an individual under 18 is rejected as underage at once, and not sent to Smile ID', async () => {
    const customer = await createCustomer(t, org.key);
    const response = await call('POST', `/v1/customers/${customer}/verifications`, {
      body: individual('27004321', { date_of_birth: `${new Date().getUTCFullYear() - 15}-01-01` }),
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.data).toMatchObject({ status: 'rejected', reason: 'underage', decided_by: 'provider' });
    await runSmileIdJobsOnce(t.deps);
    expect(simulator.requests.some((r) => r.rawBody.includes(response.data.id))).toBe(false);
  });

  it('a callback sent twice is applied once: the second is stored as a duplicate', async () => {
    const id = await submitted(individual('27009003'));
    await runSmileIdJobsOnce(t.deps);
    await decided(id);
    await simulator.idle();
    const deadline = Date.now() + WAIT_MS;
    while ((await callbacksOf(id)).length < 2 && Date.now() < deadline) await sleep(POLL_MS);
    expect((await callbacksOf(id)).map((c) => c.outcome)).toEqual(['applied', 'duplicate']);
    expect(await verification(id)).toMatchObject({ status: 'verified' });
  });

  it('a callback that never comes is recovered by polling /job_status; a late one then changes nothing', async () => {
    const missing = await submitted(individual('27009002'));
    const late = await submitted(individual('27009001'));
    await runSmileIdJobsOnce(t.deps);
    expect(await verification(missing)).toMatchObject({ status: 'pending' });
    const pollTime = new Date(Date.now() + SMILE_ID_POLL_AFTER_MS + 1_000);
    await runSmileIdJobsOnce(t.deps, pollTime);
    expect(simulator.requests.some((r) => r.path === '/v1/job_status' && r.rawBody.includes(missing))).toBe(
      true,
    );
    expect(await verification(missing)).toMatchObject({ status: 'verified', decided_by: 'provider' });
    expect(await verification(late)).toMatchObject({ status: 'verified' });
    await simulator.deliverPendingCallbacks();
    expect((await callbacksOf(late)).map((c) => c.outcome)).toEqual(['duplicate']);
  });

  it('sends a KYB as Business Verification; not found is registration_not_found', async () => {
    const found = await submitted(business('PVT-2020-1234'), 'business');
    const missing = await submitted(business('PVT-2020-1013'), 'business');
    await runSmileIdJobsOnce(t.deps);
    const sent = simulator.requests.find((r) => r.rawBody.includes(found));
    expect(sent?.path).toBe('/v1/async_business_verification');
    expect(JSON.parse(sent?.rawBody ?? '{}')).toMatchObject({
      country: 'KE',
      id_type: 'BUSINESS_REGISTRATION',
      id_number: 'PVT-2020-1234',
      partner_params: { job_type: 7 },
    });
    expect(await decided(found)).toMatchObject({ status: 'verified' });
    expect(await decided(missing)).toMatchObject({ status: 'rejected', reason: 'registration_not_found' });
  });

  it('Smile ID unavailable: the job waits and is sent again later', async () => {
    const id = await submitted(individual('27005678'));
    simulator.failNext(1, 503);
    await runSmileIdJobsOnce(t.deps);
    expect(await verification(id)).toMatchObject({ status: 'pending' });
    await runSmileIdJobsOnce(t.deps, new Date(Date.now() + SMILE_ID_RETRY_AFTER_MS + 1_000));
    expect(await decided(id)).toMatchObject({ status: 'verified' });
  });

  it('a submission Smile ID cannot look up waits for an operator', async () => {
    const id = await submitted(
      individual('A1234567', {
        national_id: { type: 'passport', number: 'A1234567' },
        address: { line1: '1 Main St', city: 'Kampala', country: 'UG' },
      }),
    );
    await runSmileIdJobsOnce(t.deps);
    expect(simulator.requests.some((r) => r.rawBody.includes(id))).toBe(false);
    const officer = await org.member(['compliance']);
    const approved = await call('POST', `/v1/verifications/${id}/approve`, { key: officer.key, body: {} });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.data).toMatchObject({ status: 'verified', decided_by: 'operator' });
  });

  it('a forged callback is stored and changes nothing; an unknown callback address is a 404', async () => {
    const id = await submitted(individual('27009004'));
    await runSmileIdJobsOnce(t.deps);
    const config = await findSmileIdConfig(t.deps.store, org.organizationId);
    const forged = {
      ResultCode: '1012',
      PartnerParams: { job_id: id, user_id: 'x', job_type: 5 },
      timestamp: new Date().toISOString(),
      signature: Buffer.from('not the signature').toString('base64'),
    };
    const url = `/v1/verification_provider/callbacks/${config?.callbackToken}`;
    const refused = await call('POST', url, { key: null, body: forged });
    expect(refused.statusCode).toBe(400);
    expect(refused.data).toMatchObject({ code: 'callback_malformed' });
    expect(await verification(id)).toMatchObject({ status: 'pending' });
    expect((await callbacksOf(id)).map((c) => c.outcome)).toEqual(['bad_signature']);
    const unknown = await call('POST', `/v1/verification_provider/callbacks/${'A'.repeat(43)}`, {
      key: null,
      body: forged,
    });
    expect(unknown.statusCode).toBe(404);
  });

  it('repeated unavailability pauses an organization’s calls to Smile ID: the jobs wait, nothing is lost', async () => {
    const other = await newOrganization(t);
    const configured = await api(t, 'PUT', '/v1/verification_provider', {
      key: other.key,
      body: {
        provider: 'smile_id',
        settings: { base_url: simulator.apiUrl, partner_id: simulator.partnerId },
        credentials: { api_key: simulator.apiKey },
      },
    });
    expect(configured.statusCode, configured.body).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < SMILE_ID_CALLS_BEFORE_PAUSE + 2; i += 1) {
      const customer = await createCustomer(t, other.key);
      const response = await api(t, 'POST', `/v1/customers/${customer}/verifications`, {
        key: other.key,
        body: individual(`2700${5100 + i}`),
      });
      ids.push(response.data.id);
    }
    simulator.failNext(1_000, 503);
    try {
      await runSmileIdJobsOnce(t.deps);
    } finally {
      simulator.failNext(0, 503);
    }
    const reached = ids.filter((id) => simulator.requests.some((r) => r.rawBody.includes(id)));
    expect(reached).toHaveLength(SMILE_ID_CALLS_BEFORE_PAUSE);
    expect(isSmileIdPaused(other.organizationId)).toBe(true);
    // Per configuration: another organization's Smile ID is not paused.
    expect(isSmileIdPaused(org.organizationId)).toBe(false);
    for (const id of ids) {
      const shown = await api(t, 'GET', `/v1/verifications/${id}`, { key: other.key });
      expect(shown.data).toMatchObject({ status: 'pending' });
    }
    // A changed configuration starts with a closed circuit, as a rail partner's does: its jobs are sent.
    const changed = await api(t, 'PUT', '/v1/verification_provider', {
      key: other.key,
      body: {
        provider: 'smile_id',
        settings: { base_url: simulator.apiUrl, partner_id: simulator.partnerId },
        credentials: { api_key: simulator.apiKey },
      },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    await runSmileIdJobsOnce(t.deps, new Date(Date.now() + SMILE_ID_RETRY_AFTER_MS + 1_000));
    expect(isSmileIdPaused(other.organizationId)).toBe(false);
    for (const id of ids) expect(simulator.job(id), id).toBeDefined();
  });

  it('rate limits an organization’s calls to Smile ID per process: those over the bucket wait, nothing is lost', async () => {
    const limited = await newOrganization(t);
    const configured = await api(t, 'PUT', '/v1/verification_provider', {
      key: limited.key,
      body: {
        provider: 'smile_id',
        settings: { base_url: simulator.apiUrl, partner_id: simulator.partnerId },
        credentials: { api_key: simulator.apiKey },
      },
    });
    expect(configured.statusCode, configured.body).toBe(200);
    const over = 3;
    const ids: string[] = [];
    for (let i = 0; i < SMILE_ID_RATE.capacity + over; i += 1) {
      const customer = await createCustomer(t, limited.key);
      const response = await api(t, 'POST', `/v1/customers/${customer}/verifications`, {
        key: limited.key,
        body: individual(`2700${5300 + i}`),
      });
      ids.push(response.data.id);
    }
    // Another organization's job in the same instant: its own bucket.
    const neighbour = await submitted(individual('27005399'));
    const realNow = t.deps.now;
    // One instant for the whole pass, so the bucket does not refill during it.
    const instant = realNow();
    t.deps.now = () => instant;
    try {
      await runSmileIdJobsOnce(t.deps);
    } finally {
      t.deps.now = realNow;
    }
    const sent = ids.filter((id) => simulator.job(id) !== undefined);
    expect(sent).toHaveLength(SMILE_ID_RATE.capacity);
    expect(simulator.job(neighbour)).toBeDefined();
    expect(isSmileIdPaused(limited.organizationId)).toBe(false);
    const waiting = ids.filter((id) => !sent.includes(id));
    const officer = (await limited.member(['compliance'])).key;
    for (const id of waiting) {
      expect((await api(t, 'GET', `/v1/verifications/${id}`, { key: limited.key })).data.status).toBe(
        'pending',
      );
      // Held back by the rate limit: never sent, so not in the call log.
      const calls = await api(t, 'GET', `/v1/verification-provider-calls?verification=${id}`, {
        key: officer,
      });
      expect(calls.data.data).toEqual([]);
    }
    // A minute later the bucket has refilled: the rest are sent.
    const later = new Date(instant.getTime() + SMILE_ID_RETRY_AFTER_MS + 1_000);
    t.deps.now = () => later;
    try {
      await runSmileIdJobsOnce(t.deps, later);
    } finally {
      t.deps.now = realNow;
    }
    for (const id of ids) expect(simulator.job(id), id).toBeDefined();
  });

  it('waits for a second admin when the policy governs the verification provider, then applies it', async () => {
    const other = await newOrganization(t);
    await governVerificationProvider(t, other.key);
    const [alice, bob] = [await other.member(['admin']), await other.member(['admin'])];
    const proposed = await api(t, 'PUT', '/v1/verification_provider', {
      key: alice.key,
      body: {
        provider: 'smile_id',
        settings: { base_url: simulator.apiUrl, partner_id: simulator.partnerId },
        credentials: { api_key: simulator.apiKey },
      },
    });
    expect(proposed.statusCode, proposed.body).toBe(202);
    expect(proposed.data).toMatchObject({ kind: 'verification_provider', status: 'pending' });
    expect(JSON.stringify(proposed.data)).not.toContain(simulator.apiKey);
    expect((await api(t, 'GET', '/v1/verification_provider', { key: other.key })).statusCode).toBe(404);
    const approved = await api(t, 'POST', `/v1/approvals/${proposed.data.approval}/approve`, {
      key: bob.key,
      body: {},
    });
    expect(approved.statusCode, approved.body).toBe(200);
    const shown = await api(t, 'GET', '/v1/verification_provider', { key: other.key });
    expect(shown.data).toMatchObject({ object: 'verification_provider', provider: 'smile_id' });
  });

  it('shows the configuration back without its key, which is sealed at rest', async () => {
    const shown = await call('GET', '/v1/verification_provider');
    expect(shown.statusCode, shown.body).toBe(200);
    expect(shown.data).toEqual({
      object: 'verification_provider',
      provider: 'smile_id',
      settings: { base_url: simulator.apiUrl, partner_id: simulator.partnerId },
      credentials: ['api_key'],
      callback_url: expect.stringMatching(/\/v1\/verification_provider\/callbacks\/[A-Za-z0-9_-]{43}$/),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(shown.body).not.toContain(simulator.apiKey);
    const writer = await call('GET', '/v1/verification_provider', { key: t.key });
    expect(writer.statusCode).toBe(403);
    const [row] = await t.deps.store.query(
      'SELECT settings, sealed_credentials FROM verification_provider_configs WHERE organization_id = $1',
      [org.organizationId],
    );
    expect(String(row?.sealed_credentials)).not.toContain(simulator.apiKey);
    expect(row?.settings).toEqual({ base_url: simulator.apiUrl, partner_id: simulator.partnerId });
  });
});

describe.each(BACKENDS)('Smile ID in production on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'production');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses a base URL the outbound address guard does not let production call', async () => {
    const configure = (base_url: string) =>
      t.deps.store.transaction((tx) =>
        configureSmileId(
          tx,
          t.deps,
          t.organizationId,
          { provider: 'smile_id', settings: { base_url, partner_id: '2001' }, credentials: { api_key: 'k' } },
          SYSTEM_ACTOR,
        ),
      );
    await expect(configure('http://127.0.0.1:9/v1')).rejects.toMatchObject({
      status: 400,
      errors: [{ param: 'settings.base_url', code: 'invalid_url' }],
    });
    await expect(configure('https://api.smileidentity.com/v1')).resolves.toMatchObject({
      settings: { base_url: 'https://api.smileidentity.com/v1' },
    });
  });
});
