/**
 * Smile ID tests' shared pieces: an app listening on a real port (Smile ID's callbacks reach it), the
 * simulator as a real server, an organization configured with it, and a KYC submission of a Kenyan ID.
 */
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { type SmileIdSimulator, startSmileIdSimulator } from '../../src/simulators/smileId/index.ts';
import { api, type Backend, createCustomer, startTestApp, type TestApp } from './harness.ts';
import { newOrganization, type TestOrganization } from './organizations.ts';

/** How long a test waits for a callback to be applied, and how often it looks. */
export const SMILE_ID_WAIT_MS = 3_000;
const SMILE_ID_LOOK_EVERY_MS = 10;

export interface SmileIdSetup {
  t: TestApp;
  simulator: SmileIdSimulator;
  org: TestOrganization;
  close(): Promise<void>;
}

/** The body of `PUT /v1/verification_provider` naming the simulator. */
export function smileIdConfiguration(simulator: SmileIdSimulator) {
  return {
    provider: 'smile_id',
    settings: { base_url: simulator.apiUrl, partner_id: simulator.partnerId },
    credentials: { api_key: simulator.apiKey },
  };
}

export async function startSmileIdSetup(backend: Backend): Promise<SmileIdSetup> {
  const t = await startTestApp(backend, 'sandbox');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const simulator = await startSmileIdSimulator();
  const org = await newOrganization(t);
  const configured = await api(t, 'PUT', '/v1/verification_provider', {
    key: org.key,
    body: smileIdConfiguration(simulator),
  });
  expect(configured.statusCode, configured.body).toBe(200);
  return {
    t,
    simulator,
    org,
    async close() {
      await simulator.close();
      await t.close();
    },
  };
}

/** A Kenyan national ID submission: the simulator decides by the number's last four characters. */
export function kenyanIndividual(idNumber: string, overrides: Record<string, unknown> = {}) {
  return {
    type: 'individual',
    legal_name: 'Neema Wanjiku Mwangi',
    date_of_birth: '1991-03-09',
    national_id: { type: 'national_id', number: idNumber },
    phone: '+254711555666',
    address: { line1: '5 Kenyatta Road', city: 'Nakuru', country: 'KE' },
    ...overrides,
  };
}

/** Makes the organization's policy ask a second admin to approve any change of its verification provider. */
export async function governVerificationProvider(t: TestApp, key: string): Promise<void> {
  const policy = await api(t, 'PUT', '/v1/policies', {
    key,
    headers: { 'idempotency-key': 'govern-provider' },
    body: {
      rules: [
        {
          id: 'second-admin-for-the-provider',
          applies_to: 'change',
          match: { kinds: ['verification_provider'] },
          action: 'require_approval',
          approval: { quorum: 1, roles: ['admin'] },
        },
      ],
    },
  });
  expect(policy.statusCode, policy.body).toBe(200);
}

/** A new customer's verification of this ID number, pending; its id. */
export async function submitKyc(t: TestApp, key: string, idNumber: string): Promise<string> {
  const customer = await createCustomer(t, key);
  const response = await api(t, 'POST', `/v1/customers/${customer}/verifications`, {
    key,
    body: kenyanIndividual(idNumber),
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.data.id as string;
}

/** Waits until `condition` holds, or fails naming `what`. */
export async function eventually(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + SMILE_ID_WAIT_MS;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, SMILE_ID_LOOK_EVERY_MS));
  }
  throw new Error(`timed out waiting for ${what}`);
}
